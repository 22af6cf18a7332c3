"""pipeline specialist: deal stages, amounts and close dates (docs/rules.md).

Decisions beyond the spec table:
- A deal with no stage is a `missing_stage` warning (it sits in no pipeline column
  and no forecast), unless its stage was malformed: then the `invalid_value`
  finding already says so.
- A deal whose stage is unknown is reported once, as `unknown_stage`; the
  won-deal and past-close-date rules only judge deals whose stage is known.
- `amount_looks_like_typo` (suggestion): a deal whose amount is at least
  rules.amount_typo_factor (default 100) times the median amount of its
  company's deals in the same currency (rules.amount_typo_min_deals, default three, or
  more with a positive amount, so one outlier cannot drag the median towards itself).
- A malformed amount on a won deal gives both `invalid_value` and
  `won_without_amount`: the won revenue is unknown either way.
- Exposure is the deal's own positive amount; a negative amount exposes nothing.
"""

from __future__ import annotations

from decimal import Decimal
from operator import index

from reviews.engine.batch import Batch, Deal
from reviews.engine.findings import RawFinding, Severity
from reviews.engine.rules import Rules
from reviews.engine.specialists.common import invalid_value_findings, money, named
from reviews.engine.specialists.spec import (
    INVALID_VALUE,
    FixTarget,
    Kind,
    Match,
    Measure,
    Specialist,
)
from reviews.engine.specialists.typos import TypoGroup, typo_factors, typo_groups
from reviews.engine.tables.columns import columns

CATEGORY = "pipeline"
SLICE: dict[str, tuple[str, ...]] = {
    "deals": ("id", "name", "amount", "stage", "close_date", "pipeline", "company_id"),
}
W, C = (Severity.WARNING,), (Severity.CRITICAL,)


SPEC = Specialist(
    category=CATEGORY,
    kinds=(
        Kind(
            "won_without_close_date",
            C,
            ("deal", "deals", "won without a close date"),
            finds="a closed-won deal with no close date",
            reads=("deals.stage", "deals.closeDate"),
            fix=FixTarget("deals", "closeDate"),
        ),
        Kind(
            "won_without_amount",
            C,
            ("deal", "deals", "won without an amount"),
            finds="a closed-won deal with no amount, an amount of 0, or a malformed one",
            reads=("deals.stage", "deals.amount"),
            fix=FixTarget("deals", "amount"),
        ),
        Kind(
            "negative_amount",
            C,
            ("deal", "deals", "negative amount"),
            finds="any deal with an amount below 0",
            reads=("deals.amount",),
            fix=FixTarget("deals", "amount"),
        ),
        Kind(
            "open_past_close_date",
            W,
            ("deal", "deals", "open past the close date"),
            finds="an open deal (with a known stage) whose close date is before the as-of date",
            reads=("deals.stage", "deals.closeDate"),
            fix=FixTarget("deals", "closeDate"),
        ),
        Kind(
            "unknown_stage",
            W,
            ("deal", "deals", "stage not in its pipeline"),
            finds="a stage nothing describes: not in the deal's pipeline as the dataset or "
            "upload defines it, not described by the export's state columns, not a default "
            "stage ([input.md](input.md#pipelines-and-stages))",
            reads=("deals.stage",),
            fix=FixTarget("deals", "stage"),
        ),
        Kind(
            "missing_stage",
            W,
            ("deal", "deals", "no stage"),
            finds="a deal with no stage (a malformed stage is an `invalid_value` instead)",
            reads=("deals.stage",),
            fix=FixTarget("deals", "stage"),
        ),
        Kind(
            "amount_looks_like_typo",
            (Severity.SUGGESTION,),
            ("deal", "deals", "amount looks like a typo"),
            Match.FUZZY,
            rules=("amount_typo_factor", "amount_typo_min_deals"),
            finds="a deal at least this many times the median amount of its company's deals "
            "in the same currency (this many or more with an amount above 0; amounts are "
            "never compared across currencies)",
            reads=("deals.amount", "deals.companyId"),
            fix=FixTarget("deals", "amount"),
            measure=Measure("amount_typo_factor", typo_factors, inclusive=True),
        ),
        INVALID_VALUE,
    ),
    slice=SLICE,
    report_rank=0,
    candidate_rules=("closing_soon_days",),
)


def detect(batch: Batch, rules: Rules) -> list[RawFinding]:
    """Each rule's deals, queried over the deals' columns; findings in the deals' order,
    a deal's own in the order of _RULES, the amount typos last."""
    rows = columns(batch).query(_ALL_RULES, ("deals",), today=batch.as_of.date())
    found = [_RULES[rule][1](batch, batch.deals[row]) for row, rule in rows]
    ordered = [finding for finding in found if finding]
    return [*invalid_value_findings(batch, CATEGORY), *ordered, *_amount_typos(batch, rules)]


# Which stage a deal is in is resolved as every rule resolves it (Batch.stage_of): the
# deals' columns carry it (stage_id, is_closed, is_won; NULL where nothing describes it).
UNKNOWN_STAGE = "SELECT row FROM deals WHERE stage_id IS NULL AND stage_given"
MISSING_STAGE = "SELECT row FROM deals WHERE stage_id IS NULL AND stage_given IS NOT TRUE"
WON_WITHOUT_CLOSE_DATE = "SELECT row FROM deals WHERE is_won AND is_closed AND close_date IS NULL"
WON_WITHOUT_AMOUNT = (
    "SELECT row FROM deals WHERE is_won AND is_closed AND coalesce(amount_sign, 0) = 0"
)
OPEN_PAST_CLOSE_DATE = "SELECT row FROM deals WHERE NOT is_closed AND close_date < $today"
NEGATIVE_AMOUNT = "SELECT row FROM deals WHERE amount_sign < 0"


def near_misses(batch: Batch, rules: Rules, limit: int) -> list[dict]:
    """Open deals closing within rules.closing_soon_days of the as-of date with no amount: not wrong
    yet, but a forecast is about to count them at zero."""
    rows = columns(batch).query(
        # Days apart, not today + N days: that date may lie past 9999-12-31.
        """SELECT row FROM deals
        WHERE NOT is_closed AND coalesce(amount_sign, 0) = 0
            AND date_diff('day', $today, close_date) BETWEEN 0 AND $days
        ORDER BY row LIMIT $limit""",
        ("deals",),
        today=batch.as_of.date(),
        days=index(rules.closing_soon_days),  # whole days, not text DuckDB would cast
        limit=max(limit, 0),
    )
    return [_closing_soon(batch.deals[row]) for (row,) in rows]


def _closing_soon(deal: Deal) -> dict:
    return {
        "kind": "closing_soon_without_amount",
        "record_ids": [deal.id],
        "detail": f"Deal {_name(deal)} closes {deal.close_date} with no amount.",
    }


def _won_without_close_date(batch: Batch, deal: Deal) -> RawFinding:
    return _finding(
        deal,
        kind="won_without_close_date",
        severity=Severity.CRITICAL,
        title=f"Won deal {named(deal)} has no close date",
        detail=(
            f"Deal {_name(deal)} is closed-won "
            f"(stage {deal.stage!r}, {money(deal.amount, deal.currency)}) "
            "but has no close date, so its revenue falls in no period."
        ),
        fix="Set the close date to the day the deal was won.",
    )


def _won_without_amount(batch: Batch, deal: Deal) -> RawFinding:
    value = "amount 0" if deal.amount is not None else "no amount"
    return _finding(
        deal,
        kind="won_without_amount",
        severity=Severity.CRITICAL,
        title=f"Won deal {named(deal)} has {value}",
        detail=(
            f"Deal {_name(deal)} is closed-won (stage {deal.stage!r}) with {value}, "
            "so won revenue is understated."
        ),
        fix="Enter the contracted amount from the signed order.",
    )


def _negative_amount(batch: Batch, deal: Deal) -> RawFinding:
    return _finding(
        deal,
        kind="negative_amount",
        severity=Severity.CRITICAL,
        title=f"Deal {named(deal)} has a negative amount ({money(deal.amount, deal.currency)})",
        detail=f"Deal {_name(deal)} has amount {deal.amount}; a deal amount cannot be below 0.",
        fix="Correct the amount (credits and refunds belong in billing, not in a deal).",
    )


def _open_past_close_date(batch: Batch, deal: Deal) -> RawFinding:
    today = batch.as_of.date()
    days = (today - deal.close_date).days
    return _finding(
        deal,
        kind="open_past_close_date",
        severity=Severity.WARNING,
        title=(
            f"Open deal {named(deal)} is {days} day{'s' if days != 1 else ''} past its close date"
        ),
        detail=(
            f"Deal {_name(deal)} is still open (stage {deal.stage!r}) but its close date "
            f"{deal.close_date} is before the batch's as-of date {today}."
        ),
        fix="Close the deal as won or lost, or move the close date to a realistic date.",
    )


def _unknown_stage(batch: Batch, deal: Deal) -> RawFinding:
    pipeline = batch.pipeline_for(deal)
    known = ", ".join(stage.id for stage in pipeline.stages)
    names = f" (deal names pipeline {deal.pipeline!r})" if deal.pipeline != pipeline.id else ""
    return _finding(
        deal,
        kind="unknown_stage",
        severity=Severity.WARNING,
        title=f"Deal {named(deal)} has unknown stage {deal.stage!r}",
        detail=(
            f"Deal {_name(deal)} has stage {deal.stage!r}, which is not a stage of pipeline "
            f"{pipeline.id!r}{names}. Known stages: {known}."
        ),
        fix="Map the deal to one of the pipeline's stages, or add the stage to the pipeline.",
    )


def _missing_stage(batch: Batch, deal: Deal) -> RawFinding | None:
    """None for a malformed stage: an invalid_value already, not also a missing one."""
    if deal.id in batch.derive("malformed_stages", _malformed_stages):
        return None
    return _finding(
        deal,
        kind="missing_stage",
        severity=Severity.WARNING,
        title=f"Deal {named(deal)} has no stage",
        detail=f"Deal {_name(deal)} has no stage, so it is in no pipeline column or forecast.",
        fix="Set the deal's stage.",
    )


def _malformed_stages(batch: Batch) -> set[str]:
    """Ids of deals whose stage was malformed."""
    return {
        p.record_id
        for p in batch.value_problems
        if p.category == CATEGORY and p.path.rsplit(".", 1)[-1] == "stage"
    }


def _amount_typos(batch: Batch, rules: Rules) -> list[RawFinding]:
    factor = rules.amount_typo_factor
    return [
        _amount_typo(deal, group)
        for group in typo_groups(batch, rules, factor=factor)
        for deal in group.deals
        if deal.amount >= group.typical * factor
    ]


def _amount_typo(deal: Deal, group: TypoGroup) -> RawFinding:
    typical = group.typical
    ratio = deal.amount / typical
    # The currency is named when the company's other deals, in other currencies, are not
    # among those compared.
    deals = (
        f"{len(group.deals)} {group.currency} deals"
        if group.several_currencies
        else (f"{len(group.deals)} deals")
    )
    return _finding(
        deal,
        kind="amount_looks_like_typo",
        severity=Severity.SUGGESTION,
        title=f"Deal {named(deal)} amount {money(deal.amount, deal.currency)} looks like a typo",
        detail=(
            f"Deal {_name(deal)} is {money(deal.amount, deal.currency)}, {ratio:.0f}x the median "
            f"{money(typical, deal.currency)} of the {deals} of company {group.company_id}."
        ),
        fix="Check the amount for extra digits against the quote or order.",
        confidence=0.6,
        # At risk is the excess over the company's usual amount, never the whole
        # mistyped amount (reviews.engine.at_risk).
        exposure={deal.id: deal.amount - typical},
    )


# Each rule's query and the finding it makes of a deal (None: not one after all), in the
# order a deal's findings come (a won deal may lack both its close date and its amount).
_RULES = (
    (UNKNOWN_STAGE, _unknown_stage),
    (MISSING_STAGE, _missing_stage),
    (WON_WITHOUT_CLOSE_DATE, _won_without_close_date),
    (OPEN_PAST_CLOSE_DATE, _open_past_close_date),
    (WON_WITHOUT_AMOUNT, _won_without_amount),
    (NEGATIVE_AMOUNT, _negative_amount),
)
# The rules in one statement (a query costs about a millisecond however small the batch),
# each row tagged with its rule, in the deals' order, then the order of _RULES.
_ALL_RULES = (
    " UNION ALL ".join(f"SELECT row, {n} AS rule FROM ({q})" for n, (q, _) in enumerate(_RULES))  # noqa: S608 (constants)
    + " ORDER BY row, rule"
)


def _finding(
    deal: Deal,
    *,
    kind: str,
    severity: Severity,
    title: str,
    detail: str,
    fix: str,
    confidence: float = 1.0,
    exposure: dict[str, Decimal] | None = None,
) -> RawFinding:
    if exposure is None:
        exposure = {deal.id: deal.amount} if deal.amount and deal.amount > 0 else {}
    return RawFinding(
        category=CATEGORY,
        kind=kind,
        severity=severity,
        title=title,
        detail=detail,
        record_ids=[deal.id],
        suggested_fix=fix,
        confidence=confidence,
        exposure=exposure,
    )


def _name(deal: Deal) -> str:
    return f"{deal.id} ({deal.name!r})" if deal.name else deal.id
