"""Prometheus metrics at /metrics (docs/deploy.md#metrics), for a bearer METRICS_TOKEN.

Every value is computed when Prometheus scrapes, from the database and Redis, which all
web and worker processes share: no process keeps a count of its own, so several
gunicorn workers and Celery workers need no multiprocess mode and lose nothing when one
restarts. Durations are histograms over the rows' own start and finish times, so they
only grow as runs finish, as a counter does.

A part that cannot be read (Redis away) is left out of that scrape and counted in
`revreview_metrics_errors{part}`; the rest is still answered."""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db.models import Count, DurationField, ExpressionWrapper, F, Max, Q, Sum
from django.http import Http404, HttpRequest, HttpResponse
from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.exposition import choose_encoder

from alerts.models import WebhookAttempt, WebhookDelivery
from connectors.models import Connection, Pull
from connectors.status import calls_left
from ledger import budget
from ledger.models import LedgerEntry
from reviews.llm.breaker import Breaker, State
from reviews.llm.catalog import roster_models
from reviews.models import AgentRun, ReviewRun

logger = logging.getLogger(__name__)

RUN_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600)
TASK_BUCKETS = (0.5, 1, 5, 15, 30, 60, 120, 300, 600)
MICROS = 1_000_000


def _duration():
    return ExpressionWrapper(F("finished_at") - F("started_at"), output_field=DurationField())


def _histogram(name: str, doc: str, rows, label: str, buckets: tuple) -> HistogramMetricFamily:
    """A histogram of finished rows' durations by `label`, from one grouped query."""
    family = HistogramMetricFamily(name, doc, labels=[label])
    counts = {f"le_{i}": Count("id", filter=Q(took__lte=timedelta(seconds=b))) for i, b in
              enumerate(buckets)}  # fmt: skip
    grouped = (
        rows.filter(started_at__isnull=False, finished_at__isnull=False)
        .annotate(took=_duration())
        .values(label)
        .annotate(total=Count("id"), took_sum=Sum("took"), **counts)
        .order_by(label)
    )
    for row in grouped:
        cumulative = [(str(float(b)), row[f"le_{i}"]) for i, b in enumerate(buckets)]
        cumulative.append(("+Inf", row["total"]))
        seconds = row["took_sum"].total_seconds() if row["took_sum"] else 0.0
        family.add_metric([row[label]], cumulative, seconds)
    return family


def runs() -> Iterator[Metric]:
    family = GaugeMetricFamily(
        "revreview_runs", "Review runs by status and mode (rows now).", labels=["status", "mode"]
    )
    for row in ReviewRun.objects.values("status", "mode").annotate(n=Count("id")).order_by():
        family.add_metric([row["status"], row["mode"]], row["n"])
    yield family
    degraded = ReviewRun.objects.filter(degraded=True).count()
    yield GaugeMetricFamily(
        "revreview_runs_degraded", "Runs a specialist failed in (rows now).", value=degraded
    )
    oldest = ReviewRun.objects.filter(status=ReviewRun.Status.QUEUED).order_by("created_at")
    first = oldest.values_list("created_at", flat=True).first()
    age = (datetime.now(UTC) - first).total_seconds() if first else 0.0
    yield GaugeMetricFamily(
        "revreview_oldest_queued_run_age_seconds",
        "How long the oldest queued run has waited for a worker (0: none waits).",
        value=age,
    )


def durations() -> Iterator[Metric]:
    finished = (ReviewRun.Status.DONE, ReviewRun.Status.FAILED)
    yield _histogram(
        "revreview_run_duration_seconds",
        "Finished runs, from start to finish, by mode.",
        ReviewRun.objects.filter(status__in=finished),
        "mode",
        RUN_BUCKETS,
    )
    yield _histogram(
        "revreview_task_duration_seconds",
        "Finished specialist and coordinator tasks, from start to finish, by agent.",
        AgentRun.objects.filter(status__in=(AgentRun.Status.DONE, AgentRun.Status.FAILED)),
        "agent",
        TASK_BUCKETS,
    )


def queues() -> Iterator[Metric]:
    """Messages waiting in each Celery queue, where Redis is the broker (a Redis list per
    queue, and one per priority level kombu adds)."""
    broker = settings.CELERY_BROKER_URL or ""
    if not broker.startswith(("redis://", "rediss://", "unix://")):
        return
    import redis

    client = redis.Redis.from_url(broker, socket_timeout=5, socket_connect_timeout=2)
    family = GaugeMetricFamily(
        "revreview_queue_length",
        "Tasks waiting in a Celery queue (Redis broker).",
        labels=["queue"],
    )
    try:
        for queue in settings.CELERY_TASK_QUEUES:
            names = [queue.name, *(f"{queue.name}\x06\x16{p}" for p in range(1, 10))]
            family.add_metric([queue.name], sum(client.llen(name) for name in names))
    finally:
        client.close()
    yield family


def breakers() -> Iterator[Metric]:
    family = GaugeMetricFamily(
        "revreview_model_breaker_state",
        "Each model's circuit breaker: 1 for the state it is in.",
        labels=["model", "state"],
    )
    for model in sorted(roster_models()):
        now = Breaker(model).state()
        for state in State:
            family.add_metric([model, state.value], 1.0 if state is now else 0.0)
    yield family


def pulls() -> Iterator[Metric]:
    family = GaugeMetricFamily(
        "revreview_pulls", "HubSpot pulls by status (rows now).", labels=["status"]
    )
    for row in Pull.objects.values("status").annotate(n=Count("id")).order_by():
        family.add_metric([row["status"]], row["n"])
    yield family
    failed = GaugeMetricFamily(
        "revreview_last_pull_failed",
        "1 when a connected dataset's last finished pull failed.",
        labels=["dataset"],
    )
    succeeded = GaugeMetricFamily(
        "revreview_last_pull_success_timestamp_seconds",
        "When a connected dataset's last successful pull finished (Unix time).",
        labels=["dataset"],
    )
    left = GaugeMetricFamily(
        "revreview_hubspot_daily_calls_remaining",
        "HubSpot API calls the portal had left today when its last pull asked.",
        labels=["dataset", "portal"],
    )
    limit = GaugeMetricFamily(
        "revreview_hubspot_daily_calls_limit",
        "The portal's HubSpot API calls a day, as its last pull was told.",
        labels=["dataset", "portal"],
    )
    sf_left = GaugeMetricFamily(
        "revreview_salesforce_daily_requests_remaining",
        "API requests the Salesforce org had left of its rolling day when its last pull asked.",
        labels=["dataset", "org"],
    )
    sf_limit = GaugeMetricFamily(
        "revreview_salesforce_daily_requests_limit",
        "The Salesforce org's API requests a rolling day (Sforce-Limit-Info).",
        labels=["dataset", "org"],
    )
    connections = list(
        Connection.objects.filter(active=True)
        .select_related("dataset")
        .annotate(last_ok=Max("pulls__finished_at", filter=Q(pulls__status=Pull.Status.DONE)))
    )
    last = {}
    for pull in (
        Pull.objects.filter(connection__in=connections, finished_at__isnull=False)
        .order_by("connection_id", "-finished_at")
        .values("connection_id", "status")
    ):
        last.setdefault(pull["connection_id"], pull["status"])
    told = calls_left([c.pk for c in connections])
    for connection in connections:
        name = connection.dataset.name
        failed.add_metric([name], 1.0 if last.get(connection.pk) == Pull.Status.FAILED else 0.0)
        if connection.last_ok:
            succeeded.add_metric([name], connection.last_ok.timestamp())
        if connection.pk in told:
            # Each CRM's own gauges: their limits are counted differently.
            pair = (sf_left, sf_limit) if connection.provider == "salesforce" else (left, limit)
            pair[0].add_metric([name, connection.portal_id], told[connection.pk]["left"])
            if told[connection.pk]["limit"] is not None:
                pair[1].add_metric([name, connection.portal_id], told[connection.pk]["limit"])
    yield from (failed, succeeded, left, limit, sf_left, sf_limit)


def webhooks() -> Iterator[Metric]:
    deliveries = GaugeMetricFamily(
        "revreview_webhook_deliveries",
        "Webhook deliveries by status (rows now).",
        labels=["status"],
    )
    for row in WebhookDelivery.objects.values("status").annotate(n=Count("id")).order_by():
        deliveries.add_metric([row["status"]], row["n"])
    yield deliveries
    yield GaugeMetricFamily(
        "revreview_webhook_failed_attempts",
        "Webhook attempts that failed: refused, unreachable, late or not 2xx (rows now).",
        value=WebhookAttempt.objects.filter(ok=False).count(),
    )


def spend() -> Iterator[Metric]:
    midnight = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    micros = LedgerEntry.objects.filter(created_at__gte=midnight).aggregate(
        total=Sum("cost_micros")
    )["total"]
    yield GaugeMetricFamily(
        "revreview_spend_usd_today",
        "Dollars the ledger priced today's model calls at (UTC day).",
        value=(micros or 0) / MICROS,
    )
    yield GaugeMetricFamily(
        "revreview_budget_tokens_used_today",
        "Tokens counted against today's budget, calls in flight included.",
        value=budget.spent_today(),
    )
    yield GaugeMetricFamily(
        "revreview_budget_tokens_limit", "The daily token budget.", value=budget.daily_limit()
    )


PARTS: dict[str, Callable[[], Iterator[Metric]]] = {
    "runs": runs,
    "durations": durations,
    "queues": queues,
    "breakers": breakers,
    "pulls": pulls,
    "webhooks": webhooks,
    "spend": spend,
}


class Collector:
    """Every part, each read when scraped."""

    def collect(self) -> Iterator[Metric]:
        errors = GaugeMetricFamily(
            "revreview_metrics_errors", "1 for a part that could not be read.", labels=["part"]
        )
        for name, part in PARTS.items():
            try:
                metrics = list(part())
            except Exception:
                logger.warning("metrics: %s could not be read", name, exc_info=True)
                errors.add_metric([name], 1.0)
                continue
            errors.add_metric([name], 0.0)
            yield from metrics
        yield errors


def exposition(accept: str = "") -> tuple[bytes, str]:
    """The metrics and their content type, in the format the scraper accepts (the text
    format 0.0.4 unless it asks for OpenMetrics or a later text version)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(Collector())
    encoder, content_type = choose_encoder(accept)
    return encoder(registry), content_type


def metrics_view(request: HttpRequest) -> HttpResponse:
    """For Prometheus, with `Authorization: Bearer <METRICS_TOKEN>`; without the setting
    there is no such page."""
    expected = settings.METRICS_TOKEN
    if not expected:
        raise Http404("metrics are off: set METRICS_TOKEN")
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        given.strip().encode(), expected.encode()
    ):
        response = HttpResponse("a valid metrics token is required\n", status=401)
        response["WWW-Authenticate"] = 'Bearer realm="revreview metrics"'
        return response
    body, content_type = exposition(request.headers.get("Accept", ""))
    return HttpResponse(body, content_type=content_type)
