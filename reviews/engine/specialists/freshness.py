"""freshness specialist: company enrichment age (docs/rules.md).

Decisions beyond the spec table:
- Age is counted in whole calendar days between the company's date and the as-of
  date (in the as-of time zone), and "over N days" means age > N: with the default
  180, a company enriched 180 days before the as-of date is fresh, 181 is stale.
  Counting days rather than hours keeps a date-only `enrichedAt` from turning stale
  at some hour of the as-of day.
- `enrichedAt` wins over `updatedAt` when both are set, even if older: any edit
  bumps updatedAt, only enrichment refreshes firmographics.
- A company with neither date is a `never_enriched` suggestion, but only when
  other companies in the batch do carry a date (else the export simply lacks the
  columns) and neither date was malformed (then `invalid_value` already says so).
- "Has an open deal" uses batch.is_open, so a deal with an unknown stage counts.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from reviews.engine.batch import Batch, Company
from reviews.engine.findings import RawFinding, Severity, amounts_by_currency
from reviews.engine.money import format_amounts
from reviews.engine.rules import Rules
from reviews.engine.specialists.common import (
    Exposure,
    exposure_of,
    invalid_value_findings,
    named,
)
from reviews.engine.specialists.spec import INVALID_VALUE, FixTarget, Kind, Measure, Specialist

CATEGORY = "freshness"
SLICE: dict[str, tuple[str, ...]] = {
    "companies": ("id", "name", "enriched_at", "updated_at"),
    "deals": ("id", "company_id", "stage", "amount"),
}


def ages(batch: Batch, rules: Rules | None = None) -> dict[str, int]:
    """Each dated company's age in whole days at the as-of date: the value
    stale_enrichment compares with rules.stale_enrichment_days (its measure: tuning
    reads it)."""
    today = batch.as_of.date()
    found: dict[str, int] = {}
    for company in batch.companies:
        stamp, _ = _stamp(company)
        if stamp is not None:
            found[company.id] = (today - _local_date(stamp, batch.as_of)).days
    return found


# A company's age is its enrichment date, else its update date: either column will do.
DATED = ("companies.enrichedAt", "companies.updatedAt")
SPEC = Specialist(
    category=CATEGORY,
    kinds=(
        Kind(
            "stale_enrichment",
            (Severity.WARNING, Severity.SUGGESTION),
            ("company", "companies", "enrichment older than {stale_enrichment_days} days"),
            rules=("stale_enrichment_days",),
            finds="a company whose `enrichedAt` (else `updatedAt`) is more than this many "
            "whole days before the as-of date: a warning if it has an open deal, else a "
            "suggestion",
            reads=(DATED,),
            fix=FixTarget("companies", ""),  # re-enriched as a whole
            measure=Measure("stale_enrichment_days", ages, ages=True),
        ),
        Kind(
            "never_enriched",
            (Severity.SUGGESTION,),
            ("company", "companies", "never enriched"),
            finds="a company with neither `enrichedAt` nor `updatedAt`, when other companies "
            "of the batch have one (else the export simply lacks the columns)",
            reads=(DATED,),
            fix=FixTarget("companies", ""),
        ),
        INVALID_VALUE,
    ),
    slice=SLICE,
    report_rank=3,
    candidate_rules=("stale_enrichment_days", "stale_soon_days"),
)
_MAX_LISTED = 5  # deal ids spelled out in a detail; the exposure carries all of them


def detect(batch: Batch, rules: Rules) -> list[RawFinding]:
    threshold = rules.stale_enrichment_days
    findings = invalid_value_findings(batch, CATEGORY)
    today = batch.as_of.date()
    open_deals = _open_deals_by_company(batch)
    malformed = {p.record_id for p in batch.value_problems if p.category == CATEGORY}
    any_dated = any(c.enriched_at or c.updated_at for c in batch.companies)
    exposure: Exposure | None = None  # built only if something is found: a full pass
    for company in batch.companies:
        stamp, field = _stamp(company)
        if stamp is None:
            if any_dated and company.id not in malformed:
                exposure = exposure or exposure_of(batch)
                at_risk = exposure.of_companies([company.id])
                findings.append(
                    _never_enriched(
                        company, open_deals.get(company.id, []), at_risk, exposure.currencies
                    )
                )
            continue
        age = (today - _local_date(stamp, batch.as_of)).days
        if age > threshold:
            exposure = exposure or exposure_of(batch)
            at_risk = exposure.of_companies([company.id])
            deals = open_deals.get(company.id, [])
            findings.append(
                _stale(company, field, stamp, age, today, deals, at_risk, exposure.currencies)
            )
    return findings


def near_misses(batch: Batch, rules: Rules, limit: int) -> list[dict]:
    """Companies that turn stale within rules.stale_soon_days: worth refreshing now if
    they carry open deals."""
    threshold = rules.stale_enrichment_days
    today = batch.as_of.date()
    found: list[dict] = []
    for company in batch.companies:
        if len(found) >= limit:
            break
        stamp, field = _stamp(company)
        if stamp is None:
            continue
        age = (today - _local_date(stamp, batch.as_of)).days
        if threshold - rules.stale_soon_days < age <= threshold:
            found.append(
                {
                    "kind": "stale_soon",
                    "record_ids": [company.id],
                    "detail": (
                        f"Company {_name(company)} {field} {_day(stamp)} is {age} days old; "
                        f"stale after {threshold}."
                    ),
                }
            )
    return found


def _open_deals_by_company(batch: Batch) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for deal in batch.deals:
        if deal.company_id and batch.is_open(deal):
            found.setdefault(deal.company_id, []).append(deal.id)
    return found


def _stamp(company: Company) -> tuple[datetime | None, str]:
    if company.enriched_at is not None:
        return company.enriched_at, "enrichedAt"
    return company.updated_at, "updatedAt"


def _local_date(stamp: datetime | date, as_of: datetime) -> date:
    """The stamp's calendar date as seen from the as-of time zone."""
    if isinstance(stamp, datetime):
        if stamp.tzinfo is not None and as_of.tzinfo is not None:
            try:
                stamp = stamp.astimezone(as_of.tzinfo)
            except OverflowError:  # its date there lies past 9999-12-31 or before year 1
                pass
        return stamp.date()
    return stamp


def _stale(
    company: Company,
    field: str,
    stamp: datetime,
    age: int,
    today: date,
    open_deals: list[str],
    at_risk: dict[str, Decimal],
    currencies: dict[str, str],
) -> RawFinding:
    if open_deals:
        severity = Severity.WARNING
        deals = _deals(open_deals, at_risk, currencies)
        why = f"It has {deals}, worked on data that may be out of date."
        fix = "Re-enrich the company before working its open deals."
    else:
        severity = Severity.SUGGESTION
        why = "It has no open deal."
        fix = "Re-enrich the company (or archive it if it is no longer a prospect)."
    return RawFinding(
        category=CATEGORY,
        kind="stale_enrichment",
        severity=severity,
        title=f"Company {named(company)} was last enriched {age} days ago",
        detail=(
            f"Company {_name(company)}: {field} {_day(stamp)} is {age} days before "
            f"the batch's as-of date {today}. {why}"
        ),
        record_ids=[company.id],
        suggested_fix=fix,
        exposure=at_risk,
    )


def _never_enriched(
    company: Company,
    open_deals: list[str],
    at_risk: dict[str, Decimal],
    currencies: dict[str, str],
) -> RawFinding:
    why = f" It has {_deals(open_deals, at_risk, currencies)}." if open_deals else ""
    return RawFinding(
        category=CATEGORY,
        kind="never_enriched",
        severity=Severity.SUGGESTION,
        title=f"Company {named(company)} has no enrichment or update date",
        detail=(
            f"Company {_name(company)} has neither enrichedAt nor updatedAt, so its "
            f"freshness is unknown.{why}"
        ),
        record_ids=[company.id],
        suggested_fix="Enrich the company from the enrichment provider.",
        exposure=at_risk,
    )


def _deals(deal_ids: list[str], at_risk: dict[str, Decimal], currencies: dict[str, str]) -> str:
    listed = ", ".join(deal_ids[:_MAX_LISTED])
    more = f" and {len(deal_ids) - _MAX_LISTED} more" if len(deal_ids) > _MAX_LISTED else ""
    noun = "open deal" if len(deal_ids) == 1 else "open deals"
    worth = f" worth {format_amounts(amounts_by_currency(at_risk, currencies))}" if at_risk else ""
    return f"{len(deal_ids)} {noun}{worth} ({listed}{more})"


def _day(stamp: datetime) -> str:
    return stamp.date().isoformat() if isinstance(stamp, datetime) else stamp.isoformat()


def _name(company: Company) -> str:
    return f"{company.id} ({company.name})" if company.name else company.id
