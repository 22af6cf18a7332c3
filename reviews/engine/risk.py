"""Risk tiering (DESIGN principle 3): how much review a batch deserves, before any model."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from reviews.engine.batch import Batch
from reviews.engine.rules import DEFAULT_RULES, Rules

TIERS = ("trivial", "lite", "full")
SPECIALISTS_PER_TIER = {"trivial": 2, "lite": 3, "full": 4}
# Money-at-stake stages: a deal here is about to become (or is) booked revenue.
MONEY_STAGES = ("closedwon", "contractsent")
# The Rules fields the tier reads (the specialists declare theirs in their SPEC).
RULES_READ = ("tier_trivial_max_score", "tier_lite_max_score", "high_value_deal_amount")


@dataclass(frozen=True, slots=True)
class Risk:
    tier: str
    score: int
    specialist_count: int
    coordinator_role: str  # "cheap" for trivial, "mid" otherwise
    reason: str


def classify_risk(batch: Batch, rules: Rules = DEFAULT_RULES) -> Risk:
    """score = companies + contacts + 2 * deals; trivial up to rules.tier_trivial_max_score,
    lite up to rules.tier_lite_max_score, full above.
    A won or contract-sent deal at or over rules.high_value_deal_amount raises the tier by one."""
    score = len(batch.companies) + len(batch.contacts) + 2 * len(batch.deals)
    if score <= rules.tier_trivial_max_score:
        tier = "trivial"
    elif score <= rules.tier_lite_max_score:
        tier = "lite"
    else:
        tier = "full"
    reason = f"score {score}"

    # Only a smaller tier can be raised: a big batch (every re-serve of a million records
    # asks) is not scanned for its deals' money.
    big_deal = _largest_money_at_stake(batch) if tier != "full" else None
    if big_deal is not None and big_deal >= rules.high_value_deal_amount:
        tier = TIERS[TIERS.index(tier) + 1]
        reason += f"; raised for a ${big_deal:,.0f} deal at a won or contract-sent stage"

    return Risk(
        tier=tier,
        score=score,
        specialist_count=SPECIALISTS_PER_TIER[tier],
        coordinator_role="cheap" if tier == "trivial" else "mid",
        reason=reason,
    )


def _largest_money_at_stake(batch: Batch) -> Decimal | None:
    amounts = [
        deal.amount
        for deal in batch.deals
        if deal.amount is not None
        and (stage := batch.stage_of(deal)) is not None
        and (stage.won or stage.id in MONEY_STAGES)
    ]
    return max(amounts, default=None)
