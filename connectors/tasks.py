"""Celery tasks of the HubSpot connections: thin, by id, safe to run twice."""

from __future__ import annotations

import json
import logging
import time

import httpx
from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from alerts import signing
from alerts.models import Trigger, WebhookSubscription
from connectors import pulls
from connectors.models import Connection, Pull

logger = logging.getLogger(__name__)


@shared_task(
    name="connectors.pull",
    soft_time_limit=settings.HUBSPOT_PULL_TIME_LIMIT,
    time_limit=settings.HUBSPOT_PULL_TIME_LIMIT + 60,
)
def pull_task(*, pull_id: int) -> None:
    pulls.execute_pull(pull_id)


def send_pull(pull: Pull) -> None:
    pull_id = pull.pk
    transaction.on_commit(lambda: pull_task.delay(pull_id=pull_id))


@shared_task(name="connectors.start_due_pulls", soft_time_limit=120, time_limit=180)
def start_due_pulls() -> None:
    """Beat: queue the pulls that are due, and put back the running ones whose worker
    went silent (they resume from their checkpoint)."""
    now = timezone.now()
    due = Connection.objects.filter(active=True, next_pull_at__lte=now).exclude(
        pulls__status__in=[Pull.Status.QUEUED, Pull.Status.RUNNING]
    )
    for connection in due:
        try:
            send_pull(pulls.request_pull(connection))
        except pulls.AlreadyPulling:
            continue
    stale = now - timezone.timedelta(minutes=settings.HUBSPOT_PULL_STALE_MINUTES)
    for pull_id in Pull.objects.filter(
        Q(status=Pull.Status.RUNNING, heartbeat_at__lt=stale)
        | Q(status=Pull.Status.QUEUED, created_at__lt=stale)
    ).values_list("pk", flat=True):
        logger.info("pull %s went silent; resuming it", pull_id)
        pull_task.delay(pull_id=pull_id)


def pull_failed(pull_id: int) -> None:
    """Tell the dataset's webhooks that watch failures, after the commit."""
    if WebhookSubscription.objects.filter(
        active=True, dataset__connection__pulls=pull_id
    ).exists():
        notify_pull_failed.delay(pull_id=pull_id)


@shared_task(name="connectors.notify_pull_failed", bind=True, max_retries=3, soft_time_limit=60)
def notify_pull_failed(self, *, pull_id: int) -> None:
    pull = Pull.objects.select_related("connection__dataset").filter(pk=pull_id).first()
    if pull is None:
        return
    dataset = pull.connection.dataset
    body = json.dumps(
        {
            "event": "pull.failed",
            "dataset": dataset.name,
            "pull": {
                "id": pull.pk,
                "kind": pull.kind,
                "error": pull.error,
                "started_at": pull.started_at.isoformat() if pull.started_at else None,
                "retried_at": pull.connection.next_pull_at.isoformat()
                if pull.connection.next_pull_at
                else None,
            },
        }
    ).encode()
    failed = False
    for subscription in dataset.webhooks.filter(active=True):
        if Trigger.FAILED not in subscription.triggers:
            continue
        if subscription.payload_format == WebhookSubscription.Format.SLACK:
            text = f"revreview: the HubSpot pull of {dataset.name} failed: {pull.error}"
            data = json.dumps({"text": text}).encode()
        else:
            data = body
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "revreview-webhooks/1",
            "X-Revreview-Event": "pull.failed",
            signing.HEADER: signing.sign(subscription.secret, data, now=time.time()),
        }
        try:
            response = httpx.post(
                subscription.url,
                content=data,
                headers=headers,
                timeout=float(settings.WEBHOOK_TIMEOUT_SECONDS),
                follow_redirects=False,
            )
            failed |= not 200 <= response.status_code < 300
        except httpx.HTTPError:
            failed = True
    if failed:
        raise self.retry(countdown=60)
