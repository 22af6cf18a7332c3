"""Standing problems (docs/history.md): what still stands in a dataset after a sync,
whatever its verdict scope counted, and the sentence every verdict is shown with."""

from datetime import UTC, datetime
from decimal import Decimal

from reviews.engine.coordinator import fuse
from reviews.engine.history import compare as history
from reviews.engine.history.compare import compare, standing, standing_sentence
from tests.engine.test_coordinator import COUNTS, finding
from tests.engine.test_history import AUGUST, JULY, baseline

JUNE = datetime(2026, 6, 1, tzinfo=UTC)


def won_twice(amount="410000"):
    return finding(
        kind="deal_entered_twice",
        severity="critical",
        ids=("dl_1", "dl_2"),
        category="dedup",
        title="Deal Contoso renewal (dl_1) entered 2 times",
        exposure={"dl_2": Decimal(amount)},
        deal_currencies={"dl_2": "USD"},
    )


def test_an_old_critical_stands_beside_an_approve_with_its_money_and_first_seen():
    old = won_twice()
    comparison = compare([old], [], baseline([old]), AUGUST)
    review = history.apply_scope(fuse([old], COUNTS, []), comparison, "new")
    found = standing(comparison)
    assert review.decision == "approve"  # the scope stands: nothing new
    assert found == {
        "state": "open_critical",
        "critical": 1,
        "warning": 0,
        "amount": "410000",
        "currency": "USD",
        "amounts": {"USD": "410000"},
        "since": JULY.isoformat(),  # the baseline's first seen, carried
        "since_run": None,  # the orchestration fills it in
        "by_owner": [{"name": "(none)", "critical": 1, "warning": 0, "total": 1}],
        "by_source": [{"name": "(none)", "critical": 1, "warning": 0, "total": 1}],
    }
    found["since_run"] = 11
    assert standing_sentence(found) == "1 critical still open since run #11: $410,000."


def test_nothing_standing_is_clean_and_says_nothing():
    comparison = compare([finding(severity="suggestion")], [], None, AUGUST)
    found = standing(comparison)
    assert (found["state"], found["critical"], found["warning"]) == ("clean", 0, 0)
    assert standing_sentence(found) == ""
    assert standing_sentence({}) == ""


def test_warnings_only_is_open_warnings_and_since_is_the_oldest_of_the_most_severe():
    a, b = finding(ids=("co_1", "co_2")), finding(ids=("co_3", "co_4"))
    base = baseline([a])
    base.findings[history.fingerprint_of(a)] = history.Past(history.fingerprint_of(a), JUNE)
    found = standing(compare([a, b], [], base, AUGUST))
    assert (found["state"], found["warning"], found["since"]) == (
        "open_warnings",
        2,
        JUNE.isoformat(),
    )
    assert found["amount"] is None and found["amounts"] == {}
    assert standing_sentence(found) == "2 warnings still open since 2026-06-01."


def test_amounts_in_two_currencies_are_never_added_and_suppressed_ones_do_not_stand():
    usd = won_twice()
    eur = finding(
        kind="won_without_close_date",
        severity="critical",
        ids=("dl_7",),
        exposure={"dl_7": Decimal("5000")},
        deal_currencies={"dl_7": "EUR"},
    )
    dismissed = finding(severity="critical", ids=("co_8", "co_9"))
    found = standing(compare([usd, eur], [dismissed], None, AUGUST))
    assert (found["critical"], found["amount"], found["currency"]) == (2, None, "mixed")
    assert found["amounts"] == {"EUR": "5000", "USD": "410000"}
    assert (
        standing_sentence(found) == "2 critical still open since 2026-08-01: €5,000 and $410,000."
    )
    # A webhook's standing carries one amount and its currency, no `amounts`.
    webhook = {"critical": 1, "warning": 2, "amount": "410000.00", "currency": "USD"}
    assert standing_sentence(webhook) == "1 critical and 2 warnings still open: $410,000."


def test_most_urgent_names_the_new_finding_that_decided_the_verdict_first():
    old = won_twice()
    new = finding(ids=("co_5", "co_6"), title="2 companies share the domain fabrikam.example")
    review = fuse([old, new], COUNTS, [])
    assert "Most urgent: Deal Contoso renewal (dl_1) entered 2 times." in review.summary
    comparison = compare(review.findings, [], baseline([old]), AUGUST)
    review = history.apply_scope(review, comparison, "new")
    assert review.decision == "approve_with_comments"
    assert (
        "Most urgent: 2 companies share the domain fabrikam.example (new); most urgent "
        "still open: Deal Contoso renewal (dl_1) entered 2 times."
    ) in review.summary


def test_since_is_carried_only_when_the_oldest_most_severe_one_is_open():
    old, added = won_twice(), finding(severity="critical", ids=("co_7", "co_8"))
    assert history.since_carried(compare([old], [], baseline([old], run_id=3), AUGUST))
    # Re-uploaded with the same as-of: first seen equals this sync's as-of, still carried.
    assert history.since_carried(compare([old], [], baseline([old]), JULY))
    assert not history.since_carried(compare([added], [], baseline([old]), AUGUST))
    assert not history.since_carried(compare([], [], None, AUGUST))


def test_on_the_run_that_first_reported_them_they_are_open_not_still_open():
    found = {"critical": 1, "warning": 0, "amount": "410000", "currency": "USD",
             "since": AUGUST.isoformat(), "since_run": 5}  # fmt: skip
    assert standing_sentence(found, 5) == "1 critical open: $410,000."
    assert standing_sentence(found, 6) == "1 critical still open since run #5: $410,000."
    # A batch without a dataset has no earlier sync to stand since, even when served
    # from another run's review.
    assert standing_sentence(found, 6, in_dataset=False) == "1 critical open: $410,000."
