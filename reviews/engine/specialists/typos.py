"""The groups amount_looks_like_typo compares a deal's amount with (reviews.engine
.specialists.pipeline): each company's deals with an amount above 0, by currency, and
their median. Amounts are never compared or added across currencies."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from operator import index
from statistics import median

from reviews.engine.batch import Batch, Deal
from reviews.engine.rules import Rules
from reviews.engine.tables.columns import columns


def typo_factors(batch: Batch, rules: Rules) -> dict[str, Decimal]:
    """Each deal's amount over its company's median in its currency (groups of at least
    rules.amount_typo_min_deals positive amounts): the value amount_looks_like_typo
    compares with rules.amount_typo_factor (its measure: tuning reads it)."""
    found: dict[str, Decimal] = {}
    for group in typo_groups(batch, rules, factor=Decimal(0)):
        found |= {deal.id: deal.amount / group.typical for deal in group.deals}
    return found


@dataclass(frozen=True, slots=True)
class TypoGroup:
    """One company's deals in one currency, with their median: what a deal's amount is
    compared with (amounts are never compared or added across currencies)."""

    company_id: str
    currency: str
    deals: list[Deal]
    typical: Decimal
    several_currencies: bool  # the company has deals in other currencies too


# Each company's deals with an amount above 0, by currency, in groups of at least
# $min_deals: those whose largest amount may be $factor times their median (by DOUBLE,
# with room for its rounding; the exact Decimal test is the caller's), in the order of
# each company's first such deal, then of each currency's. The groups big enough are
# counted first (`sized`), so the median and the lists are made of their deals alone:
# made of every deal, they spilled past the detectors' memory ceiling and took 16-25 s
# of ten million records instead of 1.3 s (bench/README.md).
TYPO_GROUPS = """
WITH positive AS (
    SELECT row, company_id, amount_currency AS currency, CAST(amount AS DOUBLE) AS amount
    FROM deals WHERE company_id <> '' AND amount_sign > 0
), sized AS (
    SELECT company_id FROM positive
    GROUP BY company_id, currency HAVING count(*) >= $min_deals
), kept AS (
    SELECT * FROM positive WHERE company_id IN (SELECT company_id FROM sized)
), companies AS (
    SELECT company_id, min(row) AS first_row, count(DISTINCT currency) AS currencies
    FROM kept GROUP BY company_id
), groups AS (
    SELECT company_id, currency, min(row) AS first_row, list(row ORDER BY row) AS rows,
        max(amount) AS largest, median(amount) AS typical
    FROM kept GROUP BY company_id, currency HAVING count(*) >= $min_deals
)
SELECT company_id, currency, rows, currencies > 1
FROM groups JOIN companies USING (company_id)
WHERE typical < 1 OR largest >= typical * $factor * (1 - 1e-6)
ORDER BY companies.first_row, groups.first_row
"""


def typo_groups(batch: Batch, rules: Rules, *, factor: Decimal) -> list[TypoGroup]:
    """The groups whose amounts may hold a typo at `factor` (0: every group), each with
    its exact median."""
    rows = columns(batch).query(
        TYPO_GROUPS, ("deals",), min_deals=index(rules.amount_typo_min_deals), factor=float(factor)
    )
    groups = []
    for company_id, currency, members, several in rows:
        deals = [batch.deals[row] for row in members]
        typical = median(deal.amount for deal in deals)
        groups.append(TypoGroup(company_id, currency, deals, typical, several))
    return groups
