"""Dataset history on plain data (docs/history.md): fingerprints, new / open / resolved,
suppression and the verdict scope."""

import hashlib
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from reviews.engine.coordinator import fuse
from reviews.engine.history import compare as history
from reviews.engine.history.compare import Baseline, Dismissed, Past, compare, fingerprint
from tests.engine.test_coordinator import COUNTS, finding

JULY = datetime(2026, 7, 1, tzinfo=UTC)
AUGUST = datetime(2026, 8, 1, tzinfo=UTC)


def test_fingerprint_is_the_spec_hash_of_category_kind_and_sorted_ids():
    expected = hashlib.sha256(b"dedup|company_same_domain|co_1,co_2").hexdigest()[:16]
    assert fingerprint("dedup", "company_same_domain", ["co_2", "co_1"]) == expected
    assert len(expected) == 16


def test_fingerprint_ignores_title_detail_money_and_record_order():
    a = finding(ids=("co_2", "co_1"), title="A", detail="x", exposure={"dl_1": Decimal(5)})
    b = finding(ids=("co_1", "co_2"), title="B", detail="y", exposure={"dl_1": Decimal(9)})
    assert history.fingerprint_of(a) == history.fingerprint_of(b)
    assert history.fingerprint_of(a) != history.fingerprint_of(finding(ids=("co_1", "co_3")))
    assert history.fingerprint_of(a) != history.fingerprint_of(
        finding(kind="company_same_name", ids=("co_1", "co_2"))
    )


def test_fingerprint_of_a_lone_surrogate_id_does_not_crash():
    assert len(fingerprint("dedup", "k", ["co_\ud800", "co_\x00"])) == 16


def past(f, first_seen=JULY) -> Past:
    return Past(
        history.fingerprint_of(f),
        first_seen,
        f.category,
        f.kind,
        f.severity,
        f.title,
        tuple(f.record_ids),
    )


def baseline(findings, suppressed=(), run_id=7) -> Baseline:
    return Baseline(
        run_id,
        {p.fingerprint: p for p in map(past, findings)},
        {p.fingerprint: p for p in map(past, suppressed)},
    )


def test_compare_marks_open_new_and_lists_exactly_the_fixed_problems_as_resolved():
    kept = finding(ids=("co_1", "co_2"))
    fixed = finding(kind="won_without_close_date", severity="critical", ids=("dl_9",))
    added = finding(ids=("co_5", "co_6"))
    renamed = finding(ids=("co_2", "co_1"), title="a new title", exposure={"dl_1": Decimal(1)})
    result = compare([renamed, added], [], baseline([kept, fixed]), AUGUST)
    assert [(m.status, m.first_seen) for m in result.findings] == [
        ("open", JULY),
        ("new", AUGUST),
    ]
    assert [r["fingerprint"] for r in result.resolved] == [history.fingerprint_of(fixed)]
    assert result.resolved[0] == {
        "fingerprint": history.fingerprint_of(fixed),
        "category": "dedup",
        "kind": "won_without_close_date",
        "severity": "critical",
        "title": fixed.title,
        "record_ids": ["dl_9"],
    }
    assert result.baseline_run == 7


def test_compare_without_baseline_makes_everything_new_and_nothing_resolved():
    result = compare([finding()], [], None, AUGUST)
    assert [(m.status, m.first_seen) for m in result.findings] == [("new", AUGUST)]
    assert result.resolved == [] and result.baseline_run is None


def test_a_problem_suppressed_in_the_baseline_is_open_once_undismissed():
    f = finding()
    result = compare([f], [], baseline([], suppressed=[f]), AUGUST)
    assert result.findings[0].status == "open"
    assert result.findings[0].first_seen == JULY


def test_a_suppressed_problem_still_present_is_not_resolved():
    f = finding()
    key = history.fingerprint_of(f)
    dismissed = {key: Dismissed("dana", "two subsidiaries")}
    kept, hidden = history.split_suppressed([f, finding(ids=("a", "b"))], dismissed)
    assert [history.fingerprint_of(x) for x in hidden] == [key]
    result = compare(kept, hidden, baseline([f]), AUGUST, dismissed)
    assert result.resolved == []
    entry = history.suppressed_entry(result.suppressed[0])
    assert (entry["fingerprint"], entry["dismissed_by"], entry["reason"]) == (
        key,
        "dana",
        "two subsidiaries",
    )
    assert entry["status"] == "open"


def test_verdict_scope_new_judges_only_new_findings_and_all_judges_every_one():
    old_critical = finding(kind="won_without_close_date", severity="critical", ids=("dl_1",))
    new_warning = finding(ids=("co_7", "co_8"))
    for scope, expected in (("new", "approve_with_comments"), ("all", "request_changes")):
        review = fuse([old_critical, new_warning], COUNTS, [])
        result = compare(review.findings, [], baseline([old_critical]), AUGUST)
        assert history.apply_scope(review, result, scope).decision == expected


def test_the_summary_counts_new_open_resolved_and_gives_one_money_figure():
    old = finding(kind="won_without_close_date", severity="critical", ids=("dl_1",))
    gone = finding(ids=("co_8", "co_9"))
    new = finding(
        kind="negative_amount",
        severity="critical",
        ids=("dl_2",),
        exposure={"dl_2": Decimal("12000")},
    )
    review = fuse([old, new], COUNTS, [])
    result = compare(review.findings, [], baseline([old, gone]), AUGUST)
    summary = history.apply_scope(review, result, "new").summary
    assert "1 new problem; 1 still open; 1 resolved since the last sync." in summary
    assert "$12,000 at risk across 1 deal." in summary  # the review's, once
    assert "The new ones" not in summary and summary.count("$") == 1


def test_the_money_at_risk_is_never_added_across_currencies():
    euro = finding(
        kind="negative_amount",
        severity="critical",
        ids=("dl_2",),
        exposure={"dl_2": Decimal("5000")},
        deal_currencies={"dl_2": "EUR"},
    )
    dollar = finding(
        kind="won_without_amount",
        severity="critical",
        ids=("dl_3",),
        exposure={"dl_3": Decimal("20000")},
        deal_currencies={"dl_3": "USD"},
    )
    review = fuse([euro, dollar], COUNTS, [])
    result = compare(review.findings, [], baseline([]), AUGUST)
    summary = history.apply_scope(review, result, "new").summary
    assert "€5,000 and $20,000 at risk across 2 deals." in summary


@pytest.mark.slow  # its size is the point; the compare itself is the tests above
def test_compare_of_50k_findings_against_a_50k_baseline():
    # A dict look-up per finding (bench/ measures the time), the counts exact.
    current = [finding(ids=(f"co_{i}", f"co_{i + 1}")) for i in range(0, 100_000, 2)]
    before = baseline(current[: len(current) // 2])
    result = compare(current, [], before, AUGUST)
    assert result.count("open") == len(current) // 2
    assert result.count("new") == len(current) - len(current) // 2
