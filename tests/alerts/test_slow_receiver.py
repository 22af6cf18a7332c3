"""A receiver that answers `200` and then trickles a byte every second holds nothing but
its own delivery: the deliveries run on their own queue and worker (as docker-compose
deploys them), each attempt ends at its deadline and is recorded, and the delivery ends
`failed` when its retry window is over. A review sent meanwhile finishes in its normal
time."""

from __future__ import annotations

import os
import time

import pytest
from django.db import connection

from alerts.delivery import CUT_SHORT
from alerts.models import WebhookAttempt, WebhookDelivery, WebhookSubscription
from reviews.models import Dataset, ReviewRun
from reviews.orchestration.submit import submit
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
            with services.celery_worker(env, hooks):
                yield review_worker
    finally:
        app.conf.task_always_eager = True


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
