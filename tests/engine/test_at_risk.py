"""The one money figure (reviews.engine.at_risk, docs/output.md#money-at-risk): a
suspected typo puts only its excess at risk and never reaches the headline; a deal is
counted once; currencies are never added up."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from django.conf import settings

from reviews.engine import coordinator
from reviews.engine.at_risk import money_at_risk
from reviews.engine.findings import RawFinding
from reviews.engine.specialists import NAMES, detector
from tests.engine.specialists.factories import company, deal, make_batch

OPEN = dict(stage="qualifiedtobuy", close_date=date(2026, 12, 1))


def review(batch) -> coordinator.Review:
    found = [f for name in NAMES for f in detector(name)(batch, settings.REVIEW_RULES)]
    return coordinator.fuse(found, batch.counts, [])


def test_a_suggested_typo_counts_its_excess_on_itself_and_nothing_in_the_headline():
    batch = make_batch(
        companies=[company("co_1", domain="acme.example")],
        deals=[
            deal("dl_1", company_id="co_1", amount=10_000, **OPEN),
            deal("dl_2", company_id="co_1", amount=12_000, **OPEN),
            deal("dl_3", company_id="co_1", amount=1_575_000, **OPEN),  # 15,750 mistyped
        ],
    )
    result = review(batch)
    typo = next(f for f in result.findings if f.kind == "amount_looks_like_typo")
    assert typo.amount_at_risk == Decimal(1_575_000 - 12_000)  # the excess over the median
    # Nothing else is wrong: a suggestion at 0.6 puts no money in the headline.
    assert [f.kind for f in result.findings] == ["amount_looks_like_typo"]
    assert result.pipeline_at_risk == 0 and result.pipeline_by_currency == {}
    assert "at risk" not in result.summary and "$" not in result.summary.split("Most")[0]


def test_a_deal_named_by_several_findings_is_counted_once_at_its_largest():
    def finding(kind, severity, exposure, currency="USD"):
        return RawFinding(
            "pipeline",
            kind,
            severity,
            kind,
            "",
            list(exposure),
            exposure=exposure,
            deal_currencies=dict.fromkeys(exposure, currency),
        )

    at_risk = money_at_risk(
        [
            finding("won_without_close_date", "critical", {"dl_1": Decimal(410_000)}),
            finding("open_past_close_date", "warning", {"dl_1": Decimal(410_000)}),
            finding("deal_entered_twice", "critical", {"dl_2": Decimal(20_000)}),
            finding("negative_amount", "critical", {"dl_3": Decimal(5_000)}, "EUR"),
            finding("amount_looks_like_typo", "suggestion", {"dl_4": Decimal(9_000_000)}),
        ]
    )
    assert at_risk.by_currency == {"USD": Decimal(430_000), "EUR": Decimal(5_000)}
    assert at_risk.deals == 3
    assert at_risk.single == 0  # two currencies: no single figure for the API's number


def test_the_summary_and_the_standing_figure_are_the_same_money():
    batch = make_batch(
        companies=[company("co_1", domain="acme.example")],
        deals=[
            deal("dl_1", company_id="co_1", amount=410_000, stage="closedwon"),  # no date
            deal("dl_2", company_id="co_1", amount=-5_000, **OPEN),
        ],
    )
    result = review(batch)
    assert result.pipeline_by_currency == {"USD": Decimal(410_000)}
    assert "$410,000 at risk across 1 deal." in result.summary
    severe = [f for f in result.findings if f.severity in ("critical", "warning")]
    assert money_at_risk(severe).by_currency == result.pipeline_by_currency
