"""A receiver that answers `200` and then trickles a byte every second holds nothing but
its own delivery: the deliveries run on their own queue and worker (as docker-compose
deploys them), each attempt ends at its deadline and is recorded, and the delivery ends
`failed` when its retry window is over. A review sent meanwhile finishes in its normal
time."""

from __future__ import annotations

import os
import socket
import time

import pytest
from django.db import connection
from django.utils import timezone

from alerts.delivery import CUT_SHORT
from alerts.models import WebhookAttempt, WebhookDelivery, WebhookSubscription
from reviews.models import Dataset, ReviewRun
from reviews.orchestration.intake.submit import submit
from revreview.celery import app
from tests import services
from tests.alerts.receiver import TrickleReceiver
from tests.orchestration.test_worker_integration import wait_until_finished
from tests.uploads import upload

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

DEADLINE = 3  # seconds: WEBHOOK_TIMEOUT_SECONDS of the workers
WINDOW = 7  # seconds: attempts at 0 and ~4 s; a third would start past the window


@pytest.fixture
def deployed_workers(postgres, redis_url):
    """A review worker (celery and sweep queues) and a webhooks worker, as compose runs
    them, with a short deadline and retry window."""
    db = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "revreview.settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": redis_url,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
        "WEBHOOK_TIMEOUT_SECONDS": str(DEADLINE),
        "WEBHOOK_RETRY_BASE_SECONDS": "1",
        "WEBHOOK_RETRY_WINDOW_SECONDS": str(WINDOW),
    }
    app.conf.task_always_eager = False
    reviews = [*services.QUIET_WORKER_ARGS, "-Q", "celery,sweep", "-n", "reviews@%h"]
    hooks = [*services.QUIET_WORKER_ARGS, "-Q", "webhooks", "-n", "webhooks@%h"]
    try:
        with services.celery_worker(env, reviews) as review_worker:
            with services.celery_worker(env, hooks) as hooks_worker:
                # Both consuming before anything is sent (the test's Redis db was just
                # flushed: a message sent before a worker declared its queue is lost).
                wait_for_workers(["reviews", "webhooks"])
                review_worker.hooks = hooks_worker
                yield review_worker
    finally:
        app.conf.task_always_eager = True


def wait_for_workers(names: list[str], timeout: float = 60) -> None:
    wanted = {f"{name}@{socket.gethostname()}" for name in names}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answered = {name for reply in app.control.ping(timeout=1) for name in reply}
        if wanted <= answered:
            return
    raise AssertionError(f"workers {sorted(wanted)} did not answer within {timeout} s")


def review_time(worker) -> float:
    began = time.monotonic()
    run = submit([upload("seed-example.json")], no_cache=True).run  # dispatched on commit
    run = wait_until_finished(run, worker, timeout=60)
    assert run.status == ReviewRun.Status.DONE
    return time.monotonic() - began


def test_a_trickling_receiver_holds_no_review_and_its_delivery_ends_failed(deployed_workers):
    normal = min(review_time(deployed_workers) for _ in range(2))
    dataset = Dataset.objects.create(name="acme-hubspot")
    with TrickleReceiver(interval=1.0) as receiver:
        WebhookSubscription.objects.create(
            dataset=dataset, url=receiver.url, secret="s", triggers=["approve_with_comments"]
        )
        alerting = submit([upload("seed-example.json")], no_cache=True, dataset="acme-hubspot")
        wait_until_finished(alerting.run, deployed_workers, timeout=60)
        started = time.monotonic()
        while not receiver.arrivals and time.monotonic() - started < 30:
            time.sleep(0.05)
        assert receiver.arrivals, "the delivery never reached the receiver"
        # On record while it is out: a worker lost now would leave this row behind.
        out = WebhookAttempt.objects.get(delivery__run=alerting.run, number=1)
        assert (out.error, out.ok) == (CUT_SHORT, False)

        during = review_time(deployed_workers)  # while the receiver trickles

        delivery = WebhookDelivery.objects.get(run=alerting.run)
        while delivery.status != WebhookDelivery.Status.FAILED and time.monotonic() - started < 40:
            time.sleep(0.2)
            delivery.refresh_from_db()
    print(f"review alone {normal:.2f} s; beside a trickling receiver {during:.2f} s")
    assert during < normal + 1.5, (normal, during)
    assert delivery.status == WebhookDelivery.Status.FAILED
    assert delivery.finished_at is not None
    attempts = list(delivery.attempt_log.all())
    assert [a.number for a in attempts] == [1, 2] == list(range(1, delivery.attempts + 1))
    assert len(receiver.arrivals) == 2
    for attempt in attempts:
        assert (attempt.ok, attempt.response_code) == (False, None)
        assert attempt.error == f"no complete answer within the deadline of {DEADLINE} s"[:300]
        assert DEADLINE * 1000 - 200 <= attempt.latency_ms < DEADLINE * 1000 + 1500


def test_an_attempt_whose_worker_is_killed_stays_on_record_and_the_delivery_moves_on(
    deployed_workers, settings
):
    """SIGKILL to the webhooks worker mid-attempt: the attempt's row is there, saying it
    was cut short, and the sweep settles the delivery instead of leaving it `sending`."""
    from alerts import delivery as deliveries
    from alerts.tasks import deliver_webhook
    from tests.web.conftest import reviewed

    settings.WEBHOOK_TIMEOUT_SECONDS = DEADLINE
    dataset = Dataset.objects.create(name="acme-hubspot")
    with TrickleReceiver(interval=1.0) as receiver:
        subscription = WebhookSubscription.objects.create(
            dataset=dataset, url=receiver.url, secret="s"
        )
        pending = WebhookDelivery.objects.create(
            subscription=subscription, run=reviewed(), body="{}", next_attempt_at=timezone.now()
        )
        deliver_webhook.delay(delivery_id=pending.pk)
        started = time.monotonic()
        while not receiver.arrivals and time.monotonic() - started < 30:
            time.sleep(0.05)
        assert receiver.arrivals, "the delivery never reached the receiver"
        services.kill_worker(deployed_workers.hooks)
    pending.refresh_from_db()
    assert pending.status == WebhookDelivery.Status.SENDING
    (lost,) = pending.attempt_log.all()
    assert (lost.number, lost.ok, lost.error) == (1, False, CUT_SHORT)

    time.sleep(DEADLINE + 0.5)  # stuck: claimed longer ago than an attempt can last
    assert deliveries.overdue(grace_seconds=0) == []
    pending.refresh_from_db()
    assert pending.status == WebhookDelivery.Status.PENDING  # its next attempt is due later
    assert pending.next_attempt_at > timezone.now()
