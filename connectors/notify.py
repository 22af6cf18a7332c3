"""A failed pull, told to the dataset's webhooks that watch failures (trigger `failed`):
a JSON body {"event": "pull.failed", "dataset", "pull": {...}} (or Slack text), signed
as every revreview webhook is (X-Revreview-Signature), retried on failure."""

from __future__ import annotations

import json
import time

from celery import shared_task
from django.conf import settings

from alerts import destinations, signing, transport
from alerts.models import Trigger, WebhookSubscription
from connectors.models import Pull


def pull_failed(pull_id: int) -> None:
    """Tell the dataset's webhooks that watch failures, after the commit."""
    if WebhookSubscription.objects.filter(active=True, dataset__connection__pulls=pull_id).exists():
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
            label = pull.connection.provider_label
            text = f"revreview: the {label} pull of {dataset.name} failed: {pull.error}"
            data = json.dumps({"text": text}).encode()
        else:
            data = body
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "revreview-webhooks/1",
            "X-Revreview-Event": "pull.failed",
            signing.HEADER: signing.sign(subscription.secret, data, now=time.time()),
        }
        # The same checked, pinned transport as every webhook (alerts/): no inward
        # destination, one deadline for the whole attempt.
        began = time.monotonic()
        total = float(settings.WEBHOOK_TIMEOUT_SECONDS)
        try:
            destination, address = destinations.pin(subscription.url, seconds=total)
        except destinations.Refused:
            continue  # refused for good: retrying will not change it
        except destinations.Unresolvable:
            failed = True
            continue
        answer = transport.post(
            destination, address, data, headers, deadline_seconds=total, started=began
        )
        failed |= not answer.ok
    if failed:
        raise self.retry(countdown=60)
