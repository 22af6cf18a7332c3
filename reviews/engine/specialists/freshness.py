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
- "Has an open deal" means as Batch.is_open does: a deal with an unknown stage counts.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from operator import index

from reviews.engine.batch import Batch, Company
from reviews.engine.findings import RawFinding, Severity, amounts_by_currency
from reviews.engine.money import format_amounts
from reviews.engine.rules import Rules
from reviews.engine.specialists.common import (
    exposure_of,
    invalid_value_findings,
    named,
)
from reviews.engine.specialists.spec import INVALID_VALUE, FixTarget, Kind, Measure, Specialist
from reviews.engine.tables.columns import columns

CATEGORY = "freshness"
SLICE: dict[str, tuple[str, ...]] = {
    "companies": ("id", "name", "enriched_at", "updated_at"),
    "deals": ("id", "company_id", "stage", "amount"),
}


def ages(batch: Batch, rules: Rules | None = None) -> dict[str, int]:
    """Each dated company's age in whole days at the as-of date: the value
    stale_enrichment compares with rules.stale_enrichment_days (its measure: tuning
    reads it)."""
    return dict(_query(batch, AGES))


# Each company's stamp (its enrichment date, else its update date) and its age: the whole
# days from the stamp's calendar date, as seen in the as-of's time zone (its UTC offset
# $offset seconds: every reader gives a fixed one), to the as-of date. A stamp that zone
# would move past 9999-12-31 or before year 1 is read on its UTC date, as Python must.
AGED = """
SELECT row, id, stamp, date_diff('day', CAST(CASE
        WHEN local BETWEEN TIMESTAMP '0001-01-01' AND TIMESTAMP '9999-12-31 23:59:59.999999'
        THEN local ELSE utc END AS DATE), $today) AS age
FROM (
    SELECT row, id, coalesce(enriched_at, updated_at) AS stamp,
        CAST(stamp AS TIMESTAMP) AS utc, utc + to_seconds($offset) AS local
    FROM companies
)
"""
# The ids of each company's open deals (a deal whose stage is unknown counts as open).
OPEN_DEALS = """
SELECT company_id, list(id ORDER BY row) AS ids FROM deals
WHERE company_id <> '' AND is_closed IS NOT TRUE GROUP BY company_id
"""
# The queries below are made of these two and constants only (hence the noqa: S608).
AGES = f"SELECT id, age FROM ({AGED}) WHERE age IS NOT NULL ORDER BY row"  # noqa: S608
STALE_ENRICHMENT = f"""
SELECT aged.row, age, coalesce(ids, []) FROM ({AGED}) AS aged
LEFT JOIN ({OPEN_DEALS}) AS open ON open.company_id = aged.id
WHERE age > $threshold
"""  # noqa: S608
# Only where some company of the batch is dated: else the export lacks the columns.
NEVER_ENRICHED = f"""
SELECT aged.row, NULL, coalesce(ids, []) FROM ({AGED}) AS aged
LEFT JOIN ({OPEN_DEALS}) AS open ON open.company_id = aged.id
WHERE stamp IS NULL AND EXISTS (SELECT 1 FROM ({AGED}) WHERE stamp IS NOT NULL)
"""  # noqa: S608
# Both in one statement, in the companies' order (a query costs a millisecond or more
# however small the batch; a company is at most one of them).
STALE_OR_NEVER = f"{STALE_ENRICHMENT} UNION ALL {NEVER_ENRICHED} ORDER BY 1"  # noqa: S608
STALE_SOON = f"""
SELECT row, age FROM ({AGED}) WHERE age > $threshold - $soon AND age <= $threshold
ORDER BY row LIMIT $limit
"""  # noqa: S608


def _query(batch: Batch, sql: str, **params: object) -> list[tuple]:
    as_of = batch.as_of
    offset = as_of.utcoffset().total_seconds()
    return columns(batch).query(
        sql, ("companies", "deals"), today=as_of.date(), offset=offset, **params
    )


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
    """Each rule's companies, queried over the companies' and deals' columns, in the
    companies' order."""
    malformed = {p.record_id for p in batch.value_problems if p.category == CATEGORY}
    # index(): whole days, refused as they are otherwise (DuckDB would cast "180").
    rows = _query(batch, STALE_OR_NEVER, threshold=index(rules.stale_enrichment_days))
    findings = invalid_value_findings(batch, CATEGORY)
    exposure = exposure_of(batch) if rows else None  # a full pass: only if needed
    for row, age, open_deals in rows:
        company = batch.companies[row]
        if age is None and company.id in malformed:
            continue  # its date was malformed: invalid_value says so already
        at_risk = exposure.of_companies([company.id])
        if age is None:
            findings.append(_never_enriched(company, open_deals, at_risk, exposure.currencies))
        else:
            stamp, field = _stamp(company)
            today = batch.as_of.date()
            findings.append(
                _stale(company, field, stamp, age, today, open_deals, at_risk, exposure.currencies)
            )
    return findings


def near_misses(batch: Batch, rules: Rules, limit: int) -> list[dict]:
    """Companies that turn stale within rules.stale_soon_days: worth refreshing now if
    they carry open deals."""
    threshold = index(rules.stale_enrichment_days)
    rows = _query(
        batch,
        STALE_SOON,
        threshold=threshold,
        soon=rules.stale_soon_days,
        limit=max(limit, 0),
    )
    found: list[dict] = []
    for row, age in rows:
        company = batch.companies[row]
        stamp, field = _stamp(company)
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


def _stamp(company: Company) -> tuple[datetime | None, str]:
    if company.enriched_at is not None:
        return company.enriched_at, "enrichedAt"
    return company.updated_at, "updatedAt"


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
