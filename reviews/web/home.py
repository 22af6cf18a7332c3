"""What the home page shows (docs/history.md, "The home page"): one row per dataset of the
user's workspaces, with its health score and trend, open criticals and money at risk
(the latest sync's standing: reviews.engine.at_risk, never counted again here), its last
sync and its next scheduled pull; and the one-off uploads beside them. A fixed number of
queries whatever the number of datasets and syncs: the score is kept on each run
(ReviewRun.health), so a trend reads one column."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from django.db.models import Count, F, Max, OuterRef, Subquery, Window
from django.db.models.functions import RowNumber
from django.http import HttpRequest

from connectors import registry
from connectors.models import Connection, Pull
from reviews.engine.vocabulary import crm_of
from reviews.models import Batch, Dataset, ReviewRun
from revreview import charts
from workspaces.access import scope

TREND_SYNCS = 12  # the syncs a row's trend shows, newest on the right
ONE_OFF_SHOWN = 10
SPARK_WIDTH, SPARK_HEIGHT, SPARK_PAD = 160, 40, 5


@dataclass(frozen=True, slots=True)
class Point:
    """One sync on a trend: where it is drawn and what its hover says."""

    x: float
    y: float
    number: int  # the dataset's sync number (1 for its oldest)
    as_of: datetime | None
    health: Decimal


@dataclass(frozen=True, slots=True)
class Spark:
    points: list[Point]
    floor: int  # the score at the bottom of the drawing; the top is always 100
    width: int = SPARK_WIDTH
    height: int = SPARK_HEIGHT

    @property
    def polyline(self) -> str:
        return " ".join(f"{p.x:.1f},{p.y:.1f}" for p in self.points)


@dataclass(slots=True)
class DatasetRow:
    dataset: Dataset
    # The latest finished review of its newest reviewed sync (of the last TREND_SYNCS):
    # what the score, criticals and money say.
    run: ReviewRun | None = None
    last_sync: datetime | None = None  # the newest accepted batch's as-of
    syncs: int = 0
    trend: Spark | None = None
    connection: Connection | None = None
    amounts: dict[str, Decimal] = field(default_factory=dict)
    crm: str = ""  # the CRM its newest sync came from (reviews.engine.vocabulary)

    @property
    def crm_label(self) -> str:
        """HubSpot or Salesforce: the connection's, else the newest sync's."""
        if self.connection is not None:
            return self.connection.provider_label
        return registry.label(self.crm) if self.crm else ""

    @property
    def health(self) -> Decimal | None:
        return self.run.health if self.run is not None else None

    @property
    def criticals(self) -> int:
        return int((self.run.standing or {}).get("critical") or 0) if self.run else 0

    @property
    def pull_state(self) -> str:
        """The scheduled pull's state in words: '' without a connection."""
        connection = self.connection
        if connection is None:
            return ""
        if not connection.active:
            return "paused"
        return {
            Pull.Status.QUEUED: "pull queued",
            Pull.Status.RUNNING: "pulling now",
            Pull.Status.FAILED: "last pull failed",
        }.get(connection.last_pull_status, "scheduled")


def spark(history: list[tuple[int, datetime | None, Decimal]]) -> Spark | None:
    """The trend of `history` (sync number, as-of, health; oldest first), None when no
    sync has a score. Drawn from `floor` (the lowest score's tens, at most 90) up to 100:
    on a 0-100 scale a fall from 99 to 89 would be a flat line in 30 pixels."""
    if not history:
        return None
    floor = min(int(min(health for _, _, health in history)) // 10 * 10, 90)
    places = charts.line(
        [health for _, _, health in history],
        width=SPARK_WIDTH, height=SPARK_HEIGHT, pad=SPARK_PAD, low=floor, high=100,
    )  # fmt: skip
    points = [
        Point(x, y, number, as_of, health)
        for (x, y), (number, as_of, health) in zip(places, history, strict=True)
    ]
    return Spark(points, floor)


def standing_amounts(standing: dict) -> dict[str, Decimal]:
    """The money at risk a run's standing holds, by currency (reviews.engine.at_risk put
    it there); a run kept before `amounts` has its one `amount` and `currency`."""
    amounts = standing.get("amounts")
    if amounts is None and standing.get("amount") and standing.get("currency"):
        amounts = {standing["currency"]: standing["amount"]}
    return {code: Decimal(amount) for code, amount in (amounts or {}).items()}


def _order(row: DatasetRow) -> tuple:
    """The least healthy first (fix first), unscored datasets last, then by name."""
    health = row.health
    return (health is None, health if health is not None else 0, -row.criticals, row.dataset.name)


def dataset_rows(request: HttpRequest) -> list[DatasetRow]:
    datasets = scope(Dataset.objects.select_related("workspace"), request.user, "workspace")
    rows = {d.pk: DatasetRow(d) for d in datasets}
    if not rows:
        return []
    # The newest TREND_SYNCS accepted batches of each dataset, numbered in the database
    # (a window per dataset), so a long history is never read to draw twelve points.
    newest_first = (F("as_of").desc(), F("created_at").desc(), F("pk").desc())
    batches = (
        Batch.objects.filter(dataset_id__in=rows, status=Batch.Status.ACCEPTED)
        .annotate(
            newest=Window(RowNumber(), partition_by=F("dataset_id"), order_by=newest_first),
            total=Window(Count("pk"), partition_by=F("dataset_id")),
        )
        .filter(newest__lte=TREND_SYNCS)
        .values_list("dataset_id", "pk", "as_of", "newest", "total", "source")
    )
    synced: dict[int, list[tuple[int, int, datetime | None]]] = defaultdict(list)
    for dataset_id, batch_id, as_of, newest, total, source in batches:
        if newest == 1:
            rows[dataset_id].crm = crm_of(source)
        # Sync #1 is the dataset's oldest accepted batch, as on the dataset page.
        synced[dataset_id].append((total - newest + 1, batch_id, as_of))
    # Each batch's latest finished review (a re-run replaces the review it re-ran).
    latest: dict[int, ReviewRun] = {}
    done = ReviewRun.objects.filter(
        batch_id__in=[b for syncs in synced.values() for _, b, _ in syncs],
        status=ReviewRun.Status.DONE,
    ).only("pk", "batch_id", "health", "standing")
    for run in done.order_by("batch_id", "pk"):
        latest[run.batch_id] = run
    for dataset_id, syncs in synced.items():
        syncs.sort()  # oldest first
        row = rows[dataset_id]
        row.syncs, row.last_sync = syncs[-1][0], syncs[-1][2]
        shown = [(number, as_of, latest[b]) for number, b, as_of in syncs if b in latest]
        if shown:
            row.run = shown[-1][2]
            row.amounts = standing_amounts(row.run.standing or {})
        row.trend = spark(
            [(number, as_of, run.health) for number, as_of, run in shown if run.health is not None]
        )
    last_pull = Pull.objects.filter(connection=OuterRef("pk")).order_by("-created_at", "-pk")
    for connection in Connection.objects.filter(dataset_id__in=rows).annotate(
        last_pull_status=Subquery(last_pull.values("status")[:1])
    ):
        rows[connection.dataset_id].connection = connection
    return sorted(rows.values(), key=_order)


def one_off_uploads(request: HttpRequest) -> list[Batch]:
    """The newest uploads without a dataset, each with its latest run (`latest`: None for
    a rejected batch) and that run's verdict: two queries."""
    batches = list(
        scope(Batch.objects.filter(dataset__isnull=True), request.user, "workspace")
        .annotate(latest_run=Max("runs__id"))
        .order_by("-created_at")[:ONE_OFF_SHOWN]
    )
    runs = ReviewRun.objects.select_related("verdict").in_bulk(
        [b.latest_run for b in batches if b.latest_run]
    )
    for batch in batches:
        batch.latest = runs.get(batch.latest_run)
    return batches
