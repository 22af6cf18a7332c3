"""What the dataset page shows, in a fixed number of grouped queries whatever the length
of the history: its syncs with their counts and cost, the trend of open problems by
severity, the latest sync's open problems by owner and record source, and per rule kind
the share of its problems the team dismissed."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from django.db.models import Count, F, Func, IntegerField, Max, Sum

from ledger.models import LedgerEntry
from ledger.pricing import micros_to_usd
from reviews.models import Batch, Dataset, Dismissal, Finding, ReviewRun, Severity
from revreview.charts import BarChart, line, stacked_bars

SYNCS_SHOWN = 100
CHART_WIDTH, CHART_HEIGHT, CHART_PAD = 640, 180, 24


class JSONArrayLength(Func):
    """The length of a JSON list column, in the database (no list is loaded)."""

    function = "jsonb_array_length"
    output_field = IntegerField()

    def as_sqlite(self, compiler, connection, **extra):
        return super().as_sql(compiler, connection, function="json_array_length", **extra)


@dataclass(slots=True)
class Sync:
    batch: Batch
    run: ReviewRun | None
    counts: Counter = field(default_factory=Counter)  # new, open, resolved, suppressed
    severities: Counter = field(default_factory=Counter)  # open problems by severity
    usd: Decimal = Decimal(0)
    number: int = 0  # sync #1 is the dataset's oldest accepted batch in as-of order


@dataclass(frozen=True, slots=True)
class KindShare:
    category: str
    kind: str
    problems: int  # distinct fingerprints seen in the dataset's history
    dismissed: int  # of them, dismissed now

    @property
    def percent(self) -> int:
        return round(100 * self.dismissed / self.problems) if self.problems else 0


@dataclass(frozen=True, slots=True)
class Point:
    x: str
    y: str
    title: str  # the hover value: the sync, its date and the count


@dataclass(frozen=True, slots=True)
class Line:
    severity: str
    points: str  # SVG polyline points
    last: int
    dots: list[Point] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Chart:
    lines: list[Line]
    top: int  # the y axis' maximum
    first: datetime | None  # as-of of the leftmost sync
    last: datetime | None
    first_number: int = 0  # the sync numbers at either end, so two syncs of one day
    last_number: int = 0  # read apart
    width: int = CHART_WIDTH
    height: int = CHART_HEIGHT
    pad: int = CHART_PAD

    @property
    def bottom(self) -> int:
        return self.height - self.pad

    @property
    def right(self) -> int:
        return self.width - self.pad


def syncs(dataset: Dataset) -> list[Sync]:
    """The dataset's accepted batches, newest as-of first, each with its latest run and
    its sync number (1 for the oldest)."""
    accepted = dataset.batches.filter(status=Batch.Status.ACCEPTED)
    total = accepted.count()
    batches = list(
        accepted.annotate(latest_run=Max("runs__id")).order_by("-as_of", "-created_at")[
            :SYNCS_SHOWN
        ]
    )
    run_ids = [b.latest_run for b in batches if b.latest_run]
    runs = {
        run.pk: run
        for run in ReviewRun.objects.filter(pk__in=run_ids)
        .select_related("verdict")
        .annotate(
            resolved_count=JSONArrayLength(F("resolved")),
            suppressed_count=JSONArrayLength(F("suppressed")),
        )
        .defer("resolved", "suppressed")
    }
    tally = (
        Finding.objects.filter(run_id__in=run_ids)
        .order_by()
        .values_list("run_id", "status", "severity")
        .annotate(n=Count("id"))
    )
    by_run: dict[int, list[tuple[str, str, int]]] = defaultdict(list)
    for run_id, status, severity, n in tally:
        by_run[run_id].append((status, severity, n))
    costs = dict(
        LedgerEntry.objects.filter(run_id__in=run_ids)
        .order_by()
        .values("run_id")
        .annotate(micros=Sum("cost_micros"))
        .values_list("run_id", "micros")
    )
    result = []
    for index, batch in enumerate(batches):
        run = runs.get(batch.latest_run)
        sync = Sync(batch, run, number=total - index)
        if run is not None:
            run.batch = batch  # its standing line asks (no query per row)
            for status, severity, n in by_run[run.pk]:
                sync.counts[status] += n
                sync.severities[severity] += n
            sync.counts["resolved"] = run.resolved_count or 0
            sync.counts["suppressed"] = run.suppressed_count or 0
            sync.usd = micros_to_usd(costs.get(run.pk) or 0)
        result.append(sync)
    return result


def trend(history: list[Sync]) -> Chart | None:
    """One polyline per severity: the open problems (new and still open) of each sync,
    oldest on the left."""
    reviewed = [s for s in reversed(history) if s.run is not None]
    if not reviewed:
        return None
    top = max((max(s.severities.values(), default=0) for s in reviewed), default=0) or 1
    lines = []
    for severity in Severity.values:
        places = line(
            [s.severities[severity] for s in reviewed],
            width=CHART_WIDTH, height=CHART_HEIGHT, pad=CHART_PAD, low=0, high=top,
        )  # fmt: skip
        dots = [
            Point(
                f"{x:.1f}",
                f"{y:.1f}",
                f"sync #{s.number} · {s.batch.as_of:%Y-%m-%d}: "
                f"{s.severities[severity]:,} {severity}",
            )
            for (x, y), s in zip(places, reviewed, strict=True)
        ]
        points = " ".join(f"{dot.x},{dot.y}" for dot in dots)
        lines.append(Line(severity, points, reviewed[-1].severities[severity], dots))
    return Chart(
        lines,
        top,
        reviewed[0].batch.as_of,
        reviewed[-1].batch.as_of,
        reviewed[0].number,
        reviewed[-1].number,
    )


def breakdown(history: list[Sync], key: str) -> BarChart | None:
    """The latest reviewed sync's standing problems by owner (`key` "by_owner"), by
    record source ("by_source") or by deal stage ("by_stage"), as
    reviews.engine.history.breakdown counted them."""
    latest = next((sync.run for sync in history if sync.run is not None), None)
    rows = (latest.standing or {}).get(key) if latest is not None else None
    if not rows:
        return None
    return stacked_bars([(row["name"], row) for row in rows], ("critical", "warning"))


def kind_shares(dataset: Dataset) -> list[KindShare]:
    """Per rule kind: how many distinct problems the dataset's syncs had, and how many
    of them the team dismissed (the rules the team disagrees with), most dismissed first."""
    seen: dict[tuple[str, str], set[str]] = defaultdict(set)
    rows = (
        Finding.objects.filter(run__batch__dataset=dataset)
        .order_by()
        .values_list("category", "kind", "fingerprint")
        .distinct()
    )
    for category, kind, key in rows.iterator(chunk_size=5000):
        seen[(category, kind)].add(key)
    dismissed: dict[tuple[str, str], set[str]] = defaultdict(set)
    for category, kind, key in Dismissal.objects.filter(
        dataset=dataset, undone_at__isnull=True
    ).values_list("category", "kind", "fingerprint"):
        dismissed[(category, kind)].add(key)
        seen[(category, kind)].add(key)  # suppressed since: no Finding row has it
    shares = [
        KindShare(category, kind, len(keys), len(dismissed[(category, kind)]))
        for (category, kind), keys in seen.items()
    ]
    return sorted(shares, key=lambda s: (-s.percent, -s.dismissed, s.category, s.kind))
