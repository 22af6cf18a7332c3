"""Celery tasks of the alerts: thin, by id, safe to run twice."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
from django.db import transaction

from alerts import delivery
from alerts.models import WebhookSubscription

logger = logging.getLogger(__name__)

# The sweep re-sends deliveries whose task is this late (a lost message, a restart).
SWEEP_GRACE_SECONDS = 60


def run_finished(run_id: int) -> None:
    """Called when a run finishes: alert its dataset's subscribers after the commit.
    Costs one query when the run's dataset has no active subscription. Robust: a broker
    that cannot take the task is logged, never fails the review (the sweep cannot
    recover it, as no delivery row exists yet; the run stays visible all the same)."""
    if WebhookSubscription.objects.filter(active=True, dataset__batches__runs=run_id).exists():
        transaction.on_commit(lambda: notify_run_finished.delay(run_id=run_id), robust=True)


@shared_task(name="alerts.notify_run_finished", soft_time_limit=60, time_limit=90)
def notify_run_finished(*, run_id: int) -> None:
    for delivery_id in delivery.create_deliveries(run_id):
        deliver_webhook.delay(delivery_id=delivery_id)


# An attempt ends by its own deadline (WEBHOOK_TIMEOUT_SECONDS); these limits are for
# what is not the attempt (the database), and stop a task that hangs there.
@shared_task(
    name="alerts.deliver_webhook",
    soft_time_limit=settings.WEBHOOK_TIMEOUT_SECONDS + 30,
    time_limit=settings.WEBHOOK_TIMEOUT_SECONDS + 60,
)
def deliver_webhook(*, delivery_id: int) -> None:
    delay = delivery.attempt(delivery_id)
    if delay is not None:
        deliver_webhook.apply_async(kwargs={"delivery_id": delivery_id}, countdown=delay)


@shared_task(name="alerts.sweep_webhook_deliveries")
def sweep_webhook_deliveries() -> None:
    for delivery_id in delivery.overdue(SWEEP_GRACE_SECONDS):
        logger.info("webhook delivery %s was overdue; sending it now", delivery_id)
        deliver_webhook.delay(delivery_id=delivery_id)
