"""/metrics (revreview/metrics.py): refused without METRICS_TOKEN, and with it text that
prometheus_client's own parser reads, whose numbers are the rows the test made."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.parser import text_string_to_metric_families

from alerts.models import WebhookAttempt, WebhookDelivery, WebhookSubscription
from connectors import pulls
from connectors.models import Pull
from ledger.models import LedgerEntry
from reviews.llm.breaker import Breaker, Decision
from reviews.llm.catalog import roster_models
from reviews.models import AgentRun, Batch, Dataset, ReviewRun
from revreview.celery import app
from tests.connectors.portals import problem_portal
from tests.connectors.standin import serving

pytestmark = pytest.mark.django_db
TOKEN = "metrics-token-for-tests"


@pytest.fixture
def metrics_on(settings):
    settings.METRICS_TOKEN = TOKEN


def scrape(client) -> dict[str, dict[tuple, float]]:
    """{sample name: {labels as sorted pairs: value}}, read by prometheus_client."""
    response = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == CONTENT_TYPE_PLAIN_0_0_4  # what Prometheus 2 reads
    samples: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            samples.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return samples


def run(status: str, mode: str = "fresh", took: float | None = None) -> ReviewRun:
    batch = Batch.objects.create(file_name="b.json", sha256="0" * 64, size_bytes=1)
    start = datetime(2026, 8, 1, 9, tzinfo=UTC)
    return ReviewRun.objects.create(
        batch=batch, mode=mode, tier="trivial", status=status, as_of=start,
        started_at=start if took is not None else None,
        finished_at=start + timedelta(seconds=took) if took is not None else None,
    )  # fmt: skip


def test_there_is_no_metrics_page_without_the_setting(client, settings):
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics", headers={"Authorization": "Bearer "}).status_code == 404


@pytest.mark.parametrize(
    "authorization", [None, "Bearer wrong", f"Basic {TOKEN}", f"Bearer {TOKEN}x", "Bearer "]
)
def test_metrics_are_refused_without_the_token(client, metrics_on, authorization):
    headers = {"Authorization": authorization} if authorization else {}
    response = client.get("/metrics", headers=headers)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert b"revreview_runs" not in response.content


def test_runs_by_status_and_mode_and_their_durations_are_the_rows(client, metrics_on):
    run("done", took=3)
    run("done", took=40)
    run("failed", took=700)
    run("done", "cached", took=0)
    run("queued")
    specialist = run("running")
    AgentRun.objects.create(
        run=specialist, agent="dedup", status="done",
        started_at=datetime(2026, 8, 1, 9, tzinfo=UTC),
        finished_at=datetime(2026, 8, 1, 9, 0, 2, tzinfo=UTC),
    )  # fmt: skip

    samples = scrape(client)

    runs = samples["revreview_runs"]
    assert runs == {
        (("mode", "fresh"), ("status", "done")): 2,
        (("mode", "fresh"), ("status", "failed")): 1,
        (("mode", "cached"), ("status", "done")): 1,
        (("mode", "fresh"), ("status", "queued")): 1,
        (("mode", "fresh"), ("status", "running")): 1,
    }
    buckets = samples["revreview_run_duration_seconds_bucket"]
    assert buckets[(("le", "5.0"), ("mode", "fresh"))] == 1
    assert buckets[(("le", "60.0"), ("mode", "fresh"))] == 2
    assert buckets[(("le", "+Inf"), ("mode", "fresh"))] == 3
    assert samples["revreview_run_duration_seconds_count"][(("mode", "fresh"),)] == 3
    assert samples["revreview_run_duration_seconds_sum"][(("mode", "fresh"),)] == 743
    assert samples["revreview_run_duration_seconds_count"][(("mode", "cached"),)] == 1
    assert samples["revreview_task_duration_seconds_sum"][(("agent", "dedup"),)] == 2
    assert samples["revreview_oldest_queued_run_age_seconds"][()] > 0
    assert all(value == 0 for value in samples["revreview_metrics_errors"].values())


def test_breakers_spend_and_webhook_failures(client, metrics_on, settings):
    model = sorted(roster_models())[0]
    breaker = Breaker(model)
    for _ in range(settings.BREAKER_FAILURE_THRESHOLD):
        breaker.record_failure(Decision.CALL)
    LedgerEntry.objects.create(
        agent="dedup", model_requested=model, cost_micros=1_250_000, outcome="ok"
    )
    LedgerEntry.objects.create(
        agent="dedup", model_requested=model, cost_micros=500_000, outcome="ok"
    )
    dataset = Dataset.objects.create(name="acme")
    subscription = WebhookSubscription.objects.create(
        dataset=dataset, url="https://hooks.example/x", secret="s"
    )
    delivery = WebhookDelivery.objects.create(
        subscription=subscription, body="{}", status=WebhookDelivery.Status.FAILED
    )
    for number, ok in ((1, False), (2, False), (3, True)):
        WebhookAttempt.objects.create(
            delivery=delivery, number=number, started_at=datetime.now(UTC), latency_ms=5, ok=ok
        )

    samples = scrape(client)

    states = samples["revreview_model_breaker_state"]
    assert states[(("model", model), ("state", "open"))] == 1
    assert states[(("model", model), ("state", "closed"))] == 0
    assert samples["revreview_spend_usd_today"][()] == 1.75
    assert samples["revreview_budget_tokens_limit"][()] == settings.DAILY_TOKEN_BUDGET
    assert samples["revreview_webhook_deliveries"][(("status", "failed"),)] == 1
    assert samples["revreview_webhook_failed_attempts"][()] == 2
    breaker.reset()


def test_a_failed_pull_and_the_calls_left_today(client, metrics_on, settings):
    portal = problem_portal(size=5)
    portal.daily_used = 1234
    with serving(portal, settings):
        dataset = Dataset.objects.create(name="acme-hubspot")
        connection = pulls.connect(dataset, "pat-na1-good")
        pull, _ = pulls.execute_pull(pulls.request_pull(connection, by="test").pk, dispatch=False)
        assert pull.status == Pull.Status.DONE
        portal.revoke_after = 0  # the next pull's token is refused
        failed, _ = pulls.execute_pull(pulls.request_pull(connection, by="test").pk, dispatch=False)
        assert failed.status == Pull.Status.FAILED

    samples = scrape(client)

    labels = (("dataset", "acme-hubspot"),)
    assert samples["revreview_last_pull_failed"][labels] == 1
    assert samples["revreview_last_pull_success_timestamp_seconds"][labels] == (
        pull.finished_at.timestamp()
    )
    assert samples["revreview_pulls"] == {(("status", "done"),): 1, (("status", "failed"),): 1}
    portal_labels = (("dataset", "acme-hubspot"), ("portal", connection.portal_id))
    left = samples["revreview_hubspot_daily_calls_remaining"][portal_labels]
    assert 0 < left <= portal.daily - 1234
    assert samples["revreview_hubspot_daily_calls_limit"][portal_labels] == portal.daily


def test_a_salesforce_orgs_requests_left_have_their_own_gauges(client, metrics_on, settings):
    from connectors import registry
    from tests.connectors.salesforce_org import small_org
    from tests.connectors.salesforce_standin import credentials_for
    from tests.connectors.salesforce_standin import serving as serving_salesforce

    with serving_salesforce(small_org(), settings) as api:
        api.state.used = 4000
        sealed = registry.credentials_from("salesforce", credentials_for(api))
        dataset = Dataset.objects.create(name="acme-sf")
        connection = pulls.connect(dataset, sealed, provider="salesforce")
        pulls.execute_pull(pulls.request_pull(connection, by="test").pk, dispatch=False)

    samples = scrape(client)

    labels = (("dataset", "acme-sf"), ("org", connection.portal_id))
    assert samples["revreview_salesforce_daily_requests_limit"][labels] == 15_000
    assert (
        samples["revreview_salesforce_daily_requests_remaining"][labels] == 15_000 - api.state.used
    )
    assert "revreview_hubspot_daily_calls_remaining" not in samples


def test_queue_lengths_are_read_from_the_redis_broker(client, metrics_on, redis_url):
    app.conf.task_always_eager = False
    with app.connection_for_write() as connection:  # as a worker declares them
        for queue in app.amqp.queues.values():
            queue(connection.default_channel).declare()
    try:
        app.send_task("reviews.sweep", queue="sweep")
        app.send_task("reviews.sweep", queue="sweep")
        samples = scrape(client)
    finally:
        app.conf.task_always_eager = True
        app.control.purge()
    assert samples["revreview_queue_length"][(("queue", "sweep"),)] == 2
    assert samples["revreview_queue_length"][(("queue", "webhooks"),)] == 0
