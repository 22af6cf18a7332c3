"""pipeline specialist: one test per rule in docs/rules.md and per "must not flag" case."""

from __future__ import annotations

from decimal import Decimal

import pytest

from reviews.engine.batch import ValueProblem
from reviews.engine.rules import Rules
from reviews.engine.specialists import pipeline
from tests.engine.specialists.factories import day, deal, make_batch, moment, stage
from tests.engine.specialists.factories import pipeline as make_pipeline

RULES = Rules()  # the engine's defaults: no Django settings


def findings_of(*deals, **batch_kwargs):
    return pipeline.detect(make_batch(deals=list(deals), **batch_kwargs), RULES)


def kinds(findings) -> list[tuple[str, str, list[str]]]:
    return sorted((f.kind, str(f.severity), f.record_ids) for f in findings)


def test_won_without_close_date_is_critical():
    findings = findings_of(deal("dl_1", stage="closedwon", amount=5000, close_date=None))

    assert kinds(findings) == [("won_without_close_date", "critical", ["dl_1"])]
    assert findings[0].exposure == {"dl_1": Decimal(5000)}
    assert findings[0].confidence == 1.0
    assert findings[0].suggested_fix


@pytest.mark.parametrize("amount", [None, 0])
def test_won_without_amount_is_critical(amount):
    findings = findings_of(
        deal("dl_1", stage="closedwon", amount=amount, close_date=day("2026-07-01"))
    )

    assert kinds(findings) == [("won_without_amount", "critical", ["dl_1"])]


def test_negative_amount_is_critical_in_any_stage():
    findings = findings_of(
        deal("dl_1", stage="closedlost", amount=-500, close_date=day("2026-07-01")),
        deal("dl_2", stage="qualifiedtobuy", amount=-1, close_date=day("2026-09-01")),
    )

    assert kinds(findings) == [
        ("negative_amount", "critical", ["dl_1"]),
        ("negative_amount", "critical", ["dl_2"]),
    ]
    assert "-500" in findings[0].detail
    assert findings[0].exposure == {}


def test_open_past_close_date_is_a_warning():
    findings = findings_of(
        deal("dl_1", stage="qualifiedtobuy", amount=1000, close_date=day("2026-07-31"))
    )

    assert kinds(findings) == [("open_past_close_date", "warning", ["dl_1"])]
    assert "2026-07-31" in findings[0].detail
    assert findings[0].exposure == {"dl_1": Decimal(1000)}


def test_open_deal_closing_on_the_as_of_date_is_not_past():
    assert findings_of(deal(stage="contractsent", amount=1000, close_date=day("2026-08-01"))) == []


@pytest.mark.parametrize("stage_id", ["closedwon", "closedlost"])
def test_closed_deal_with_past_close_date_is_not_flagged(stage_id):
    assert findings_of(deal(stage=stage_id, amount=1000, close_date=day("2025-01-15"))) == []


@pytest.mark.parametrize("label", ["Closed Won", "closed won", "CLOSEDWON", " Closed  Won "])
def test_stage_label_instead_of_id_is_not_flagged(label):
    assert findings_of(deal(stage=label, amount=1000, close_date=day("2026-07-01"))) == []


def test_stage_label_still_gets_its_stage_rules():
    findings = findings_of(
        deal("dl_1", stage="Contract Sent", amount=1000, close_date=day("2026-07-01")),
        deal("dl_2", stage="Closed Won", amount=1000, close_date=None),
    )

    assert kinds(findings) == [
        ("open_past_close_date", "warning", ["dl_1"]),
        ("won_without_close_date", "critical", ["dl_2"]),
    ]


def test_unknown_stage_is_a_warning_and_not_also_past_close():
    findings = findings_of(
        deal("dl_1", stage="negotiation", amount=1000, close_date=day("2026-01-01"))
    )

    assert kinds(findings) == [("unknown_stage", "warning", ["dl_1"])]
    assert "'negotiation'" in findings[0].detail
    assert "'default'" in findings[0].detail


@pytest.mark.parametrize("blank", [None, "", "  "])
def test_missing_stage_is_a_warning(blank):
    findings = findings_of(deal("dl_1", stage=blank, amount=1000))

    assert kinds(findings) == [("missing_stage", "warning", ["dl_1"])]


def test_malformed_stage_is_reported_once_as_invalid_value():
    problem = ValueProblem("pipeline", "dl_1", "deals[0].stage", "not a string: 7")

    findings = findings_of(deal("dl_1", stage=None, amount=1000), value_problems=[problem])

    assert kinds(findings) == [("invalid_value", "warning", ["dl_1"])]


def test_invalid_values_of_other_categories_are_left_to_them():
    problem = ValueProblem("attribution", "ct_1", "contacts[0].email", "not an email")

    assert findings_of(value_problems=[problem]) == []


def test_custom_pipeline_stages_come_from_the_batch():
    enterprise = make_pipeline(
        "enterprise",
        [
            stage("discovery", "Discovery"),
            stage("signed", "Signed", closed=True, won=True),
            stage("lost", "Lost", closed=True),
        ],
    )
    findings = findings_of(
        deal("dl_1", pipeline="enterprise", stage="Signed", amount=900, close_date=None),
        deal("dl_2", pipeline="enterprise", stage="closedwon", amount=900, close_date=None),
        deal("dl_3", pipeline="enterprise", stage="lost", amount=900, close_date=day("2025-01-01")),
        deal(
            "dl_4", pipeline="enterprise", stage="discovery", amount=9, close_date=day("2026-09-01")
        ),
        pipelines=[enterprise],
    )

    assert kinds(findings) == [
        ("unknown_stage", "warning", ["dl_2"]),
        ("won_without_close_date", "critical", ["dl_1"]),
    ]


def test_amount_far_above_the_company_median_is_a_typo_suggestion():
    findings = findings_of(
        deal("dl_1", company_id="co_1", stage="qualifiedtobuy", amount=40_000),
        deal("dl_2", company_id="co_1", stage="qualifiedtobuy", amount=41_000),
        deal("dl_3", company_id="co_1", stage="qualifiedtobuy", amount=4_100_000),
    )

    assert kinds(findings) == [("amount_looks_like_typo", "suggestion", ["dl_3"])]
    assert findings[0].confidence < 1.0


def test_typo_factor_comes_from_the_rules():
    rules = RULES.with_overrides({"amount_typo_factor": 10})
    deals = [
        deal(f"dl_{n}", company_id="co_1", stage="qualifiedtobuy", amount=amount)
        for n, amount in enumerate([1_000, 1_100, 12_000])
    ]

    findings = pipeline.detect(make_batch(deals=deals), rules)

    assert kinds(findings) == [("amount_looks_like_typo", "suggestion", ["dl_2"])]


def test_a_typo_is_judged_against_the_companys_deals_in_the_same_currency():
    """Amounts are never compared across currencies: ¥1,234,567 is no typo beside deals
    of 999 in other currencies, and three yen deals are judged on their own median."""
    other = [("EUR", 950), ("GBP", 999), ("USD", 1_000), ("BHD", 12.345)]
    deals = [
        deal(f"dl_{code}", company_id="co_1", stage="qualifiedtobuy", amount=amount, currency=code)
        for code, amount in other
    ]
    yen = deal("dl_y1", company_id="co_1", stage="qualifiedtobuy", amount=1_234_567, currency="JPY")
    batch = make_batch(deals=[*deals, yen])
    assert pipeline.detect(batch, RULES) == []
    assert "dl_y1" not in pipeline.typo_factors(batch, RULES)

    yens = [
        deal(f"dl_y{n}", company_id="co_1", stage="qualifiedtobuy", amount=a, currency="JPY")
        for n, a in ((2, 10_000), (3, 11_000), (4, 12_000))
    ]
    batch = make_batch(deals=[*deals, yen, *yens])
    [typo] = pipeline.detect(batch, RULES)
    assert (typo.record_ids, typo.exposure) == (["dl_y1"], {"dl_y1": Decimal(1_234_567 - 11_500)})
    assert "the median ¥11,500 of the 4 JPY deals of company co_1." in typo.detail
    assert pipeline.typo_factors(batch, RULES)["dl_y1"] == Decimal(1_234_567) / 11_500


def test_no_typo_suggestion_without_enough_deals_to_compare():
    assert (
        findings_of(
            deal("dl_1", company_id="co_1", stage="qualifiedtobuy", amount=40_000),
            deal("dl_2", company_id="co_1", stage="qualifiedtobuy", amount=4_000_000),
        )
        == []
    )


def test_near_misses_lists_open_deals_closing_soon_without_amount():
    batch = make_batch(
        deals=[
            deal("dl_1", stage="contractsent", amount=None, close_date=day("2026-08-05")),
            deal("dl_2", stage="contractsent", amount=0, close_date=day("2026-08-08")),
            deal("dl_3", stage="contractsent", amount=10, close_date=day("2026-08-05")),
            deal("dl_4", stage="closedlost", amount=None, close_date=day("2026-08-05")),
            deal("dl_5", stage="contractsent", amount=None, close_date=day("2026-08-09")),
        ]
    )

    near = pipeline.near_misses(batch, RULES, limit=10)

    assert [n["record_ids"] for n in near] == [["dl_1"], ["dl_2"]]
    assert pipeline.near_misses(batch, RULES, limit=1) == near[:1]


@pytest.mark.parametrize("as_of", ["9999-12-30T00:00:00Z", "9999-12-31T23:59:59Z"])
def test_near_misses_at_the_calendars_end_count_to_its_last_day(as_of):
    # The horizon (as-of + closing_soon_days) lies past 9999-12-31, the last date Python holds.
    batch = make_batch(
        deals=[
            deal("dl_1", stage="contractsent", amount=None, close_date=day("9999-12-31")),
            deal("dl_2", stage="contractsent", amount=None, close_date=day("9999-12-29")),
        ],
        as_of=moment(as_of),
    )

    near = pipeline.near_misses(batch, RULES, limit=10)

    assert [n["record_ids"] for n in near] == [["dl_1"]]


def test_slice_names_the_fields_read():
    assert set(pipeline.SLICE) == {"deals"}
    assert {"amount", "stage", "close_date", "pipeline"} <= set(pipeline.SLICE["deals"])


# --- the rules as queries over the deals' columns: where DuckDB's types could differ
# from Python's Decimals and str.strip (reviews/engine/tables/columns.py) ---------------


def test_an_amount_under_a_millionth_is_neither_zero_nor_dropped_by_the_columns():
    # DECIMAL(38, 6) reads 0.0000001 as 0; the rules must not.
    findings = findings_of(
        deal("dl_1", stage="closedwon", amount="0.0000001", close_date=day("2026-07-01")),
        deal("dl_2", stage="closedlost", amount="-0.0000001", close_date=day("2026-07-01")),
    )

    assert kinds(findings) == [("negative_amount", "critical", ["dl_2"])]


@pytest.mark.parametrize("blank", ["", "   ", "\u00a0", "\u2003\t"])
def test_a_stage_of_unicode_blanks_is_missing_not_unknown(blank):
    findings = findings_of(deal("dl_1", stage=blank, amount=10, close_date=day("2026-09-01")))

    assert kinds(findings) == [("missing_stage", "warning", ["dl_1"])]


def test_a_deals_findings_come_in_the_deals_order_then_the_typos():
    findings = findings_of(
        deal("dl_3", stage="closedwon", amount=0, close_date=None),
        deal("dl_1", stage="nosuchstage", amount=-5),
        deal("dl_2", stage="qualifiedtobuy", amount=-1, close_date=day("2026-07-01")),
        *[deal(f"dl_t{n}", company_id="co_1", amount=a) for n, a in enumerate((1, 1, 900))],
    )

    assert [(f.kind, f.record_ids[0]) for f in findings] == [
        ("won_without_close_date", "dl_3"),
        ("won_without_amount", "dl_3"),
        ("unknown_stage", "dl_1"),
        ("negative_amount", "dl_1"),
        ("open_past_close_date", "dl_2"),
        ("negative_amount", "dl_2"),
        ("missing_stage", "dl_t0"),
        ("missing_stage", "dl_t1"),
        ("missing_stage", "dl_t2"),
        ("amount_looks_like_typo", "dl_t2"),
    ]


def test_an_even_groups_median_is_exact_at_the_typo_threshold():
    # The median of four (the middle two: 1.0000005 and 1.0000007) is 1.0000006 exactly;
    # 100x is 100.00006: a deal at that amount is a typo (inclusive), one a hundred-
    # millionth under it is not; DECIMAL(38, 6) would read both as 100.00006.
    def company(name: str, largest: str) -> list:
        amounts = ["1.0000004", "1.0000005", "1.0000007", largest]
        return [deal(f"dl_{name}{n}", company_id=name, amount=a) for n, a in enumerate(amounts)]

    batch = make_batch(deals=[*company("a", "100.00006"), *company("b", "100.00005999")])

    typos = [f for f in pipeline.detect(batch, RULES) if f.kind == "amount_looks_like_typo"]

    assert [f.record_ids for f in typos] == [["dl_a3"]]
    assert pipeline.typo_factors(batch, RULES)["dl_a3"] == 100
    assert pipeline.typo_factors(batch, RULES)["dl_b3"] < 100


def test_typo_groups_come_in_each_companys_first_deal_order_then_its_currencies():
    deals = [
        deal("dl_b0", company_id="co_b", amount=1, currency="EUR"),
        deal("dl_a0", company_id="co_a", amount=1, currency="USD"),
        *[
            deal(f"dl_a{n}", company_id="co_a", amount=a, currency="USD")
            for n, a in ((1, 1), (2, 500))
        ],
        *[
            deal(f"dl_b{n}", company_id="co_b", amount=a, currency="USD")
            for n, a in ((1, 1), (2, 1), (3, 700))
        ],
        *[
            deal(f"dl_b{n}", company_id="co_b", amount=a, currency="EUR")
            for n, a in ((4, 1), (5, 900))
        ],
    ]

    typos = [
        f.record_ids[0]
        for f in pipeline.detect(make_batch(deals=deals), RULES)
        if f.kind == "amount_looks_like_typo"
    ]

    assert typos == ["dl_b5", "dl_b3", "dl_a2"]


def test_near_misses_with_no_room_list_none():
    batch = make_batch(
        deals=[deal("dl_1", stage="contractsent", amount=None, close_date=day("2026-08-05"))]
    )

    assert pipeline.near_misses(batch, RULES, limit=0) == []
