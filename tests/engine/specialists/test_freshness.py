"""freshness specialist: stale enrichment, its threshold and its severity."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

from reviews.engine.batch import ValueProblem
from reviews.engine.rules import Rules
from reviews.engine.specialists import freshness
from tests.engine.specialists.factories import AS_OF, company, deal, make_batch

RULES = Rules()  # the engine's defaults: no Django settings


def days_ago(days: int, hour: int = 0) -> datetime:
    """Midnight (or `hour`) UTC of the calendar day `days` before the as-of date."""
    when = AS_OF.date() - timedelta(days=days)
    return datetime(when.year, when.month, when.day, hour, tzinfo=UTC)


def detect(companies=(), deals=(), rules=RULES, **kwargs):
    return freshness.detect(make_batch(list(companies), [], list(deals), **kwargs), rules)


def kinds(findings) -> list[tuple[str, str, list[str]]]:
    return sorted((f.kind, str(f.severity), f.record_ids) for f in findings)


def test_threshold_is_over_180_days():
    assert RULES.stale_enrichment_days == 180
    findings = detect(
        [
            company("co_180", enriched_at=days_ago(180)),
            company("co_181", enriched_at=days_ago(181)),
        ]
    )

    assert kinds(findings) == [("stale_enrichment", "suggestion", ["co_181"])]
    assert "181 days" in findings[0].title


def test_age_counts_calendar_days_not_hours():
    # 180 calendar days, but more than 180 * 24 hours before 09:00 on the as-of day
    assert detect([company(enriched_at=days_ago(180, hour=1))]) == []
    assert detect([company(enriched_at=days_ago(180, hour=23))]) == []


def test_stale_company_with_an_open_deal_is_a_warning():
    findings = detect(
        [company("co_1", name="Acme", enriched_at=days_ago(300))],
        [
            deal("dl_1", company_id="co_1", stage="contractsent", amount=25_000),
            deal("dl_2", company_id="co_1", stage="closedwon", amount=99),
        ],
    )

    assert kinds(findings) == [("stale_enrichment", "warning", ["co_1"])]
    assert findings[0].exposure == {"dl_1": Decimal(25_000)}
    assert "co_1 (Acme)" in findings[0].detail
    assert "dl_1" in findings[0].detail
    assert "$25,000" in findings[0].detail


def test_stale_company_with_only_closed_deals_is_a_suggestion():
    findings = detect(
        [company("co_1", enriched_at=days_ago(300))],
        [deal("dl_1", company_id="co_1", stage="closedlost", amount=5)],
    )

    assert kinds(findings) == [("stale_enrichment", "suggestion", ["co_1"])]
    assert findings[0].exposure == {}


def test_open_deal_without_amount_still_makes_it_a_warning():
    findings = detect(
        [company("co_1", enriched_at=days_ago(300))],
        [deal("dl_1", company_id="co_1", stage="qualifiedtobuy", amount=None)],
    )

    assert kinds(findings) == [("stale_enrichment", "warning", ["co_1"])]


def test_updated_at_is_used_when_never_enriched():
    findings = detect(
        [
            company("co_1", updated_at=days_ago(200)),
            company("co_2", updated_at=days_ago(10)),
        ]
    )

    assert kinds(findings) == [("stale_enrichment", "suggestion", ["co_1"])]
    assert "updatedAt" in findings[0].detail


def test_enriched_at_wins_over_a_newer_updated_at():
    findings = detect([company("co_1", enriched_at=days_ago(200), updated_at=days_ago(1))])

    assert kinds(findings) == [("stale_enrichment", "suggestion", ["co_1"])]
    assert "enrichedAt" in findings[0].detail


def test_threshold_comes_from_the_rules():
    rules = RULES.with_overrides({"stale_enrichment_days": 30})

    findings = detect([company("co_1", enriched_at=days_ago(31))], rules=rules)

    assert kinds(findings) == [("stale_enrichment", "suggestion", ["co_1"])]


def test_company_without_dates_is_a_never_enriched_suggestion():
    findings = detect(
        [company("co_1", enriched_at=days_ago(5)), company("co_2")],
        [deal("dl_1", company_id="co_2", stage="contractsent", amount=10)],
    )

    assert kinds(findings) == [("never_enriched", "suggestion", ["co_2"])]
    assert findings[0].exposure == {"dl_1": Decimal(10)}


def test_no_never_enriched_when_the_export_has_no_dates_at_all():
    assert detect([company("co_1"), company("co_2")]) == []


def test_malformed_date_is_reported_once_as_invalid_value():
    problem = ValueProblem("freshness", "co_2", "companies[1].enrichedAt", 'not a date: "soon"')

    findings = detect(
        [company("co_1", enriched_at=days_ago(5)), company("co_2")], value_problems=[problem]
    )

    assert kinds(findings) == [("invalid_value", "warning", ["co_2"])]


def test_near_misses_lists_companies_about_to_turn_stale():
    batch = make_batch(
        [
            company("co_1", enriched_at=days_ago(166)),
            company("co_2", enriched_at=days_ago(167)),
            company("co_3", enriched_at=days_ago(180)),
            company("co_4", enriched_at=days_ago(181)),
        ]
    )

    near = freshness.near_misses(batch, RULES, limit=10)

    assert [n["record_ids"] for n in near] == [["co_2"], ["co_3"]]
    assert freshness.near_misses(batch, RULES, limit=1) == near[:1]


def test_a_stamp_the_as_of_zone_would_move_past_the_calendar_is_read_on_its_own_date():
    # 9999-12-31T20:00Z is already 10000-01-01 at +05:00, a date Python cannot hold.
    as_of = datetime(9999, 12, 31, 23, 0, tzinfo=timezone(timedelta(hours=5)))
    stamps = [datetime(9999, 12, 31, 20, 0, tzinfo=UTC), datetime(1, 1, 1, 1, 0, tzinfo=UTC)]
    companies = [company(f"co_{i}", enriched_at=s) for i, s in enumerate(stamps)]

    found = detect(companies, as_of=as_of)

    assert kinds(found) == [("stale_enrichment", "suggestion", ["co_1"])]
