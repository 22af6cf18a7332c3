"""alerts 0002: attempts written before it kept up to 300 characters of the receiver's
reply in `error`; the migration moves them to the short, printable excerpt."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from reviews.models import Dataset
from tests.web.conftest import reviewed

# slow: migrations run forwards and back.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

BEFORE = [("alerts", "0001_webhooks")]
AFTER = [("alerts", "0002_i23hooks_attempt_excerpt")]
REPLY = "INTERNAL-SECRET\x1b " + "y" * 250 + " db_password=hunter2"


def test_stored_replies_move_to_a_short_excerpt(postgres):
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    Subscription = old.get_model("alerts", "WebhookSubscription")
    Delivery = old.get_model("alerts", "WebhookDelivery")
    Attempt = old.get_model("alerts", "WebhookAttempt")
    run = reviewed()  # the reviews app's tables are as they are now
    dataset = Dataset.objects.create(name="d")
    subscription = Subscription.objects.create(dataset_id=dataset.pk, url="https://x.example")
    delivery = Delivery.objects.create(subscription=subscription, run_id=run.pk, body="{}")
    common = {"delivery": delivery, "started_at": "2026-11-01T00:00:00Z", "latency_ms": 5}
    Attempt.objects.create(number=1, response_code=500, ok=False, error=REPLY[:300], **common)
    Attempt.objects.create(number=2, ok=False, error="ConnectError: refused", **common)

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps.get_model("alerts", "WebhookAttempt")
    replied, unreachable = new.objects.order_by("number")
    assert replied.error == "" and len(replied.excerpt) == 200
    assert replied.excerpt.startswith("INTERNAL-SECRET yyy") and "hunter2" not in replied.excerpt
    assert (unreachable.error, unreachable.excerpt) == ("ConnectError: refused", "")

    # Leave the database at the newest migrations for the tests that follow.
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
