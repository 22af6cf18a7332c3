"""Spend reports: plain functions over LedgerEntry and ReviewRun rows, per UTC day.

Definitions (what each number counts):
- tokens and dollars: the ledger entries created that day (every call attempt, failed
  ones too). Dollars are summed in integer micro-dollars, shown as Decimal.
- runs by mode and tier: every ReviewRun created that day, whatever its status.
- cache hit rate: cached runs / all runs of the day.
- cost per run: each run of the day costs the sum of its own ledger entries (whenever
  they were written); zero-cost runs (cached, detector-only) are included, because they
  are what serving honestly buys. Median averages the two middle runs; p95 is the
  nearest-rank value (the smallest cost at or above 95% of runs). Micro-dollars.
- analyst baseline: the records an analyst would otherwise have reviewed: companies +
  contacts + deals of each batch content (Batch.content_key) reviewed by a finished
  (done) run that day, counted once per day however often it was uploaded, re-run or
  served from the cache (an analyst does not re-read the same export the same day);
  priced by ledger.pricing. A period's baseline is the sum of its days.
- analyst ratio: analyst baseline / model spend ("N times cheaper"); None without spend.
- gateway cost: what the gateway itself said its calls cost (OpenRouter's usage.cost),
  summed over the entries that carry it, beside our price of those same entries; the
  difference is gateway minus ours, so a rate table that is wrong shows within a day.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

from django.db.models import Count, F, Q, QuerySet, Sum
from django.db.models.functions import Coalesce, TruncDate

from ledger.models import LedgerEntry, requester
from ledger.pricing import analyst_cost_usd, micros_to_usd
from reviews.models import ReviewRun

NOT_SERVED = "(not served)"  # the model of a call no model answered
SCHEDULED = "(scheduled)"  # the user of a call no user asked for (a scheduled pull)


@dataclass(frozen=True, slots=True)
class Usage:
    calls: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    cost_micros: int = 0
    # Reconciliation: entries whose gateway reported a cost, that cost, and our price of
    # the same entries.
    gateway_calls: int = 0
    gateway_cost_micros: int = 0
    reconciled_cost_micros: int = 0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def usd(self) -> Decimal:
        return micros_to_usd(self.cost_micros)

    @property
    def gateway_usd(self) -> Decimal:
        return micros_to_usd(self.gateway_cost_micros)

    @property
    def reconciled_usd(self) -> Decimal:
        return micros_to_usd(self.reconciled_cost_micros)

    @property
    def gateway_difference_usd(self) -> Decimal:
        """Gateway's cost minus ours over the entries it reported: > 0, we under-price."""
        return micros_to_usd(self.gateway_cost_micros - self.reconciled_cost_micros)


@dataclass(frozen=True, slots=True)
class Spend:
    """One UTC day (first_day == last_day) or a period of days."""

    first_day: date
    last_day: date
    usage: Usage
    runs_by_mode: dict[str, int]  # every mode, zeros included
    runs_by_tier: dict[str, int]
    records: int  # records reviewed by the done runs
    run_costs_micros: list[int] = field(repr=False)  # sorted, one per run

    @property
    def runs(self) -> int:
        return sum(self.runs_by_mode.values())

    @property
    def cache_hit_rate(self) -> Decimal | None:
        if not self.runs:
            return None
        return Decimal(self.runs_by_mode[ReviewRun.Mode.CACHED]) / Decimal(self.runs)

    @property
    def cost_per_run_median_micros(self) -> Decimal | None:
        costs, n = self.run_costs_micros, len(self.run_costs_micros)
        if not n:
            return None
        if n % 2:
            return Decimal(costs[n // 2])
        return Decimal(costs[n // 2 - 1] + costs[n // 2]) / 2

    @property
    def cost_per_run_p95_micros(self) -> int | None:
        n = len(self.run_costs_micros)
        if not n:
            return None
        rank = (95 * n + 99) // 100  # ceil(0.95 n), in integers
        return self.run_costs_micros[rank - 1]

    @property
    def cost_per_run_median_usd(self) -> Decimal | None:
        micros = self.cost_per_run_median_micros
        return None if micros is None else micros_to_usd(micros)

    @property
    def cost_per_run_p95_usd(self) -> Decimal | None:
        micros = self.cost_per_run_p95_micros
        return None if micros is None else micros_to_usd(micros)

    @property
    def analyst_usd(self) -> Decimal:
        return analyst_cost_usd(self.records)

    @property
    def analyst_ratio(self) -> Decimal | None:
        usd = self.usage.usd
        return self.analyst_usd / usd if usd else None


@dataclass(frozen=True, slots=True)
class SpendReport:
    days: list[Spend]  # oldest first, every day of the period
    total: Spend
    by_model: list[tuple[str, Usage]]
    by_agent: list[tuple[str, Usage]]
    # Per model, only the entries whose gateway reported a cost.
    reconciliation: list[tuple[str, Usage]] = field(default_factory=list)
    by_workspace: list[tuple[str, Usage]] = field(default_factory=list)
    by_user: list[tuple[str, Usage]] = field(default_factory=list)  # ledger.models.requester


def spend_report(
    days: int = 30, *, today: date | None = None, workspaces: Iterable[int] | None = None
) -> SpendReport:
    """The last `days` UTC days up to and including `today` (default: now), of the
    ledger rows and runs of `workspaces` (ids; None: every workspace, in total)."""
    last = today or datetime.now(UTC).date()
    first = last - timedelta(days=days - 1)
    entries = _entries_between(first, last, workspaces)
    return SpendReport(
        days=daily_spend(first, last, workspaces),
        total=period_spend(first, last, workspaces),
        by_model=usage_by(entries, "model"),
        by_agent=usage_by(entries, "agent"),
        by_workspace=usage_by(entries, "workspace__name"),
        by_user=usage_by(entries.annotate(user=requester("username")), "user", SCHEDULED),
        reconciliation=usage_by(entries.filter(gateway_cost_micros__isnull=False), "model"),
    )


def daily_spend(
    first_day: date, last_day: date, workspaces: Iterable[int] | None = None
) -> list[Spend]:
    """One Spend per UTC day from first_day to last_day inclusive, empty days too."""
    usage_per_day = {
        row.pop("day"): Usage(**row)
        for row in _usage_values(
            _entries_between(first_day, last_day, workspaces)
            .annotate(day=TruncDate("created_at", tzinfo=UTC))
            .values("day")
        )
    }
    runs_per_day: dict[date, list[tuple]] = defaultdict(list)
    for run in _run_rows(first_day, last_day, workspaces):
        runs_per_day[run[0].astimezone(UTC).date()].append(run)
    spends = []
    day = first_day
    while day <= last_day:
        spends.append(_spend(day, day, usage_per_day.get(day, Usage()), runs_per_day[day]))
        day += timedelta(days=1)
    return spends


def period_spend(first_day: date, last_day: date, workspaces: Iterable[int] | None = None) -> Spend:
    entries = _entries_between(first_day, last_day, workspaces)
    runs = _run_rows(first_day, last_day, workspaces)
    return _spend(first_day, last_day, usage(entries), runs)


def usage(entries: QuerySet[LedgerEntry]) -> Usage:
    """Totals over any set of ledger entries (the admin passes its filtered list)."""
    totals = entries.order_by().aggregate(**_USAGE_AGGREGATES)
    return Usage(**{name: value or 0 for name, value in totals.items()})


def usage_by(
    entries: QuerySet[LedgerEntry], column: str, missing: str = NOT_SERVED
) -> list[tuple[str, Usage]]:
    """Totals per model (the model that served the call), per agent, per workspace or
    per user, dearest first; rows without a value are named `missing`."""
    rows = _usage_values(entries.values(column))
    result = [(row.pop(column) or missing, Usage(**row)) for row in rows]
    return sorted(result, key=lambda item: (-item[1].cost_micros, -item[1].tokens, item[0]))


# --- queries ---------------------------------------------------------------------------


def _bounds(first_day: date, last_day: date) -> tuple[datetime, datetime]:
    start = datetime.combine(first_day, time(), tzinfo=UTC)
    end = datetime.combine(last_day + timedelta(days=1), time(), tzinfo=UTC)
    return start, end


def _entries_between(
    first_day: date, last_day: date, workspaces: Iterable[int] | None = None
) -> QuerySet[LedgerEntry]:
    start, end = _bounds(first_day, last_day)
    entries = LedgerEntry.objects.filter(created_at__gte=start, created_at__lt=end)
    return entries if workspaces is None else entries.filter(workspace_id__in=list(workspaces))


_USAGE_AGGREGATES = {
    # The ones that read a column another aggregate is named after come first: once
    # annotated, the name means the aggregate.
    "gateway_calls": Count("gateway_cost_micros"),  # counts the non-null ones
    "reconciled_cost_micros": Sum("cost_micros", filter=Q(gateway_cost_micros__isnull=False)),
    "calls": Count("id"),
    "input_tokens": Sum("input_tokens"),
    "cached_tokens": Sum("cached_tokens"),
    "output_tokens": Sum("output_tokens"),
    "cost_micros": Sum("cost_micros"),
    "gateway_cost_micros": Sum("gateway_cost_micros"),
}


def _usage_values(grouped: QuerySet) -> list[dict]:
    """One dict per group: the grouping column and the Usage fields."""
    rows = grouped.order_by().annotate(**_USAGE_AGGREGATES)
    return [
        {name: (value or 0) if name in _USAGE_AGGREGATES else value for name, value in row.items()}
        for row in rows
    ]


def _run_rows(
    first_day: date, last_day: date, workspaces: Iterable[int] | None = None
) -> list[tuple]:
    """(created_at, mode, tier, status, records, cost_micros, content_key, batch_id) per
    run."""
    start, end = _bounds(first_day, last_day)
    runs = ReviewRun.objects.filter(created_at__gte=start, created_at__lt=end)
    if workspaces is not None:
        runs = runs.filter(batch__workspace_id__in=list(workspaces))
    return list(
        runs.order_by()
        .annotate(
            records=F("batch__companies") + F("batch__contacts") + F("batch__deals"),
            cost=Coalesce(Sum("ledger_entries__cost_micros"), 0),
        )
        .values_list(
            "created_at",
            "mode",
            "tier",
            "status",
            "records",
            "cost",
            "batch__content_key",
            "batch_id",
        )
    )


def _spend(first_day: date, last_day: date, usage: Usage, runs: list[tuple]) -> Spend:
    by_mode = dict.fromkeys(ReviewRun.Mode.values, 0)
    by_tier = dict.fromkeys(ReviewRun.Tier.values, 0)
    records = 0
    reviewed: set[tuple[date, str]] = set()  # (UTC day, batch content) already counted
    for created, mode, tier, status, run_records, _cost, content_key, batch_id in runs:
        by_mode[mode] = by_mode.get(mode, 0) + 1
        by_tier[tier] = by_tier.get(tier, 0) + 1
        content = (created.astimezone(UTC).date(), content_key or f"batch {batch_id}")
        if status == ReviewRun.Status.DONE and content not in reviewed:
            reviewed.add(content)
            records += run_records
    return Spend(
        first_day=first_day,
        last_day=last_day,
        usage=usage,
        runs_by_mode=by_mode,
        runs_by_tier=by_tier,
        records=records,
        run_costs_micros=sorted(run[5] for run in runs),
    )


# --- CSV -------------------------------------------------------------------------------

CSV_HEADER = [
    "day", "runs", "fresh", "cached", "failback", "trivial", "lite", "full",
    "cache_hit_rate", "calls", "input_tokens", "cached_tokens", "output_tokens", "usd",
    "cost_per_run_median_usd", "cost_per_run_p95_usd", "records", "analyst_usd",
    "analyst_ratio",
]  # fmt: skip


def csv_row(spend: Spend) -> list[str]:
    """A Spend as CSV cells: exact decimals, empty where a number is undefined."""
    u = spend.usage
    mode, tier = spend.runs_by_mode, spend.runs_by_tier
    return [
        spend.first_day.isoformat(),
        str(spend.runs),
        *(str(mode[m]) for m in ReviewRun.Mode.values),
        *(str(tier[t]) for t in ReviewRun.Tier.values),
        _decimal(spend.cache_hit_rate, "0.0001"),
        str(u.calls),
        str(u.input_tokens),
        str(u.cached_tokens),
        str(u.output_tokens),
        str(u.usd),
        _decimal(spend.cost_per_run_median_usd),
        _decimal(spend.cost_per_run_p95_usd),
        str(spend.records),
        str(spend.analyst_usd),
        _decimal(spend.analyst_ratio, "0.1"),
    ]


def _decimal(value: Decimal | None, places: str | None = None) -> str:
    if value is None:
        return ""
    return str(value.quantize(Decimal(places)) if places else value)
