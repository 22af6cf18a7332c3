from datetime import UTC, datetime
from decimal import Decimal

import pytest

from reviews.engine.batch import Batch, Company, Contact, Deal
from reviews.engine.risk import classify_risk
from reviews.engine.rules import Rules

AS_OF = datetime(2026, 8, 1, 9, tzinfo=UTC)


def batch(companies=0, contacts=0, deals=()):
    return Batch(
        id="t",
        as_of=AS_OF,
        source=None,
        companies=[Company(id=f"co_{i}", index=i) for i in range(companies)],
        contacts=[Contact(id=f"ct_{i}", index=i) for i in range(contacts)],
        deals=[
            Deal(id=f"dl_{i}", index=i, stage=stage, amount=Decimal(amount))
            for i, (stage, amount) in enumerate(deals)
        ],
        pipelines={},
    )


@pytest.mark.parametrize(
    ("companies", "contacts", "deals", "tier", "score"),
    [
        (2, 2, 2, "trivial", 8),
        (3, 2, 2, "lite", 9),
        (6, 6, 4, "lite", 20),
        (7, 6, 4, "full", 21),
    ],
)
def test_classify_risk_tiers_by_weighted_score(companies, contacts, deals, tier, score):
    risk = classify_risk(batch(companies, contacts, [("qualifiedtobuy", "10")] * deals), Rules())
    assert (risk.tier, risk.score) == (tier, score)
    assert risk.specialist_count == {"trivial": 2, "lite": 3, "full": 4}[tier]
    assert risk.coordinator_role == ("cheap" if tier == "trivial" else "mid")


def test_a_big_won_deal_raises_the_tier():
    risk = classify_risk(batch(1, 1, [("closedwon", "250000")]))
    assert risk.tier == "lite"
    assert "raised" in risk.reason


def test_a_big_contract_sent_label_raises_the_tier():
    risk = classify_risk(batch(1, 1, [("Contract Sent", "100000")]))
    assert risk.tier == "lite"


def test_a_big_open_deal_at_an_early_stage_does_not_raise_the_tier():
    risk = classify_risk(batch(1, 1, [("qualifiedtobuy", "900000")]))
    assert risk.tier == "trivial"


def test_the_tier_bounds_and_the_high_value_amount_are_rules():
    rules = Rules().with_overrides(
        {"tier_trivial_max_score": 2, "tier_lite_max_score": 4, "high_value_deal_amount": 1000}
    )
    assert classify_risk(batch(2, 1), rules).tier == "lite"
    assert classify_risk(batch(5), rules).tier == "full"
    assert classify_risk(batch(0, 0, [("closedwon", "1000")]), rules).tier == "lite"
