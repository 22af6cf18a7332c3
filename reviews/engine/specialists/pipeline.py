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

from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from statistics import median

from reviews.engine.batch import Batch, Deal, Stage
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

CATEGORY = "pipeline"
SLICE: dict[str, tuple[str, ...]] = {
    "deals": ("id", "name", "amount", "stage", "close_date", "pipeline", "company_id"),
}
W, C = (Severity.WARNING,), (Severity.CRITICAL,)


def typo_factors(batch: Batch, rules: Rules) -> dict[str, Decimal]:
    """Each deal's amount over its company's median in its currency (groups of at least
    rules.amount_typo_min_deals positive amounts): the value amount_looks_like_typo
    compares with rules.amount_typo_factor (its measure: tuning reads it)."""
    found: dict[str, Decimal] = {}
    for group in _typo_groups(batch, rules):
        found |= {deal.id: deal.amount / group.typical for deal in group.deals}
    return found


@dataclass(frozen=True, slots=True)
class _TypoGroup:
    """One company's deals in one currency, with their median: what a deal's amount is
    compared with (amounts are never compared or added across currencies)."""

    company_id: str
    currency: str
    deals: list[Deal]
    typical: Decimal
    several_currencies: bool  # the company has deals in other currencies too


def _typo_groups(batch: Batch, rules: Rules) -> list[_TypoGroup]:
    by_company: dict[str, dict[str, list[Deal]]] = defaultdict(lambda: defaultdict(list))
    for deal in batch.deals:
        if deal.company_id and deal.amount and deal.amount > 0:
            by_company[deal.company_id][batch.currency_of(deal)].append(deal)
    return [
        _TypoGroup(company_id, code, deals, median(d.amount for d in deals), len(groups) > 1)
        for company_id, groups in by_company.items()
        for code, deals in groups.items()
        if len(deals) >= rules.amount_typo_min_deals
    ]


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
    findings = invalid_value_findings(batch, CATEGORY)
    malformed_stage = _malformed(batch, "stage")
    today = batch.as_of.date()
    for deal in batch.deals:
        stage = batch.stage_of(deal)
        if stage is None:
            if deal.stage and deal.stage.strip():
                findings.append(_unknown_stage(batch, deal))
            elif deal.id not in malformed_stage:
                findings.append(_missing_stage(deal))
        else:
            findings.extend(_stage_rules(deal, stage, today))
        if deal.amount is not None and deal.amount < 0:
            findings.append(_negative_amount(deal))
    findings.extend(_amount_typos(batch, rules))
    return findings


def near_misses(batch: Batch, rules: Rules, limit: int) -> list[dict]:
    """Open deals closing within rules.closing_soon_days of the as-of date with no amount: not wrong
    yet, but a forecast is about to count them at zero."""
    today = batch.as_of.date()
    found: list[dict] = []
    for deal in batch.deals:
        if len(found) >= limit:
            break
        stage = batch.stage_of(deal)
        if stage is None or stage.closed or deal.amount or deal.close_date is None:
            continue
        # Days apart, not today + N days: that date may lie past 9999-12-31.
        if 0 <= (deal.close_date - today).days <= rules.closing_soon_days:
            found.append(
                {
                    "kind": "closing_soon_without_amount",
                    "record_ids": [deal.id],
                    "detail": f"Deal {_name(deal)} closes {deal.close_date} with no amount.",
                }
            )
    return found


def _malformed(batch: Batch, field: str) -> set[str]:
    """Ids of deals whose `field` had a malformed value (already an invalid_value)."""
    return {
        problem.record_id
        for problem in batch.value_problems
        if problem.category == CATEGORY and problem.path.rsplit(".", 1)[-1] == field
    }


def _stage_rules(deal: Deal, stage: Stage, today: date) -> list[RawFinding]:
    found: list[RawFinding] = []
    if stage.closed and stage.won:
        if deal.close_date is None:
            found.append(_won_without_close_date(deal))
        if not deal.amount:
            found.append(_won_without_amount(deal))
    elif not stage.closed and deal.close_date is not None and deal.close_date < today:
        found.append(_open_past_close_date(deal, stage, today))
    return found


def _won_without_close_date(deal: Deal) -> RawFinding:
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


def _won_without_amount(deal: Deal) -> RawFinding:
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


def _negative_amount(deal: Deal) -> RawFinding:
    return _finding(
        deal,
        kind="negative_amount",
        severity=Severity.CRITICAL,
        title=f"Deal {named(deal)} has a negative amount ({money(deal.amount, deal.currency)})",
        detail=f"Deal {_name(deal)} has amount {deal.amount}; a deal amount cannot be below 0.",
        fix="Correct the amount (credits and refunds belong in billing, not in a deal).",
    )


def _open_past_close_date(deal: Deal, stage: Stage, today: date) -> RawFinding:
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


def _missing_stage(deal: Deal) -> RawFinding:
    return _finding(
        deal,
        kind="missing_stage",
        severity=Severity.WARNING,
        title=f"Deal {named(deal)} has no stage",
        detail=f"Deal {_name(deal)} has no stage, so it is in no pipeline column or forecast.",
        fix="Set the deal's stage.",
    )


def _amount_typos(batch: Batch, rules: Rules) -> list[RawFinding]:
    factor = rules.amount_typo_factor
    return [
        _amount_typo(deal, group)
        for group in _typo_groups(batch, rules)
        for deal in group.deals
        if deal.amount >= group.typical * factor
    ]


def _amount_typo(deal: Deal, group: _TypoGroup) -> RawFinding:
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
