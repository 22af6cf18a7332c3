"""Making deliveries for a finished run and attempting them.

Each attempt is claimed with a conditional update (pending and due -> sending), so a
task that runs twice (a redelivered Celery message, the sweep) sends once. The HTTP
call happens outside any transaction: a slow receiver must not hold a database lock."""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta

import httpx
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from alerts import payloads, signing
from alerts.models import WebhookAttempt, WebhookDelivery, WebhookSubscription
from reviews.models import ReviewRun

logger = logging.getLogger(__name__)

ERROR_EXCERPT = 300  # characters of a failed response's body kept on its attempt


def create_deliveries(run_id: int) -> list[int]:
    """One pending delivery per active subscription of the run's dataset that watches
    what the run hit. Safe to call twice: a (subscription, run) pair is made once."""
    run = (
        ReviewRun.objects.select_related("batch__dataset", "verdict")
        .filter(pk=run_id, status__in=[ReviewRun.Status.DONE, ReviewRun.Status.FAILED])
        .first()
    )
    if run is None or run.batch.dataset_id is None:
        return []
    hit = payloads.run_triggers(run)
    made = []
    now = timezone.now()
    # The run's dataset's subscriptions, of the run's own workspace: a webhook only ever
    # hears of its workspace's runs.
    subscriptions = WebhookSubscription.objects.filter(
        dataset_id=run.batch.dataset_id,
        dataset__workspace_id=run.batch.workspace_id,
        active=True,
    )
    for subscription in subscriptions:
        triggers = sorted(hit & set(subscription.triggers))
        if not triggers:
            continue
        try:
            with transaction.atomic():
                delivery = WebhookDelivery.objects.create(
                    subscription=subscription,
                    run=run,
                    triggers=triggers,
                    body=payloads.body(subscription, run, triggers),
                    next_attempt_at=now,
                )
        except IntegrityError:  # made by an earlier call for this run
            continue
        made.append(delivery.pk)
    return made


def retry_delay(attempts: int) -> float:
    """Seconds before attempt `attempts + 1`: the base, doubled after each failure,
    capped at WEBHOOK_RETRY_MAX_DELAY_SECONDS."""
    base = float(settings.WEBHOOK_RETRY_BASE_SECONDS)
    return min(base * 2 ** (attempts - 1), float(settings.WEBHOOK_RETRY_MAX_DELAY_SECONDS))


def attempt(delivery_id: int) -> float | None:
    """Send one attempt of a due delivery and record it. Returns the seconds until the
    next attempt, or None when there is none (delivered, given up, or not ours to send)."""
    now = timezone.now()
    claimed = WebhookDelivery.objects.filter(
        pk=delivery_id, status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=now
    ).update(status=WebhookDelivery.Status.SENDING, attempts=F("attempts") + 1, claimed_at=now)
    if not claimed:
        return None
    delivery = WebhookDelivery.objects.select_related("subscription").get(pk=delivery_id)
    started = timezone.now()
    code, error = post(delivery)
    latency_ms = int((timezone.now() - started).total_seconds() * 1000)
    ok = code is not None and 200 <= code < 300
    WebhookAttempt.objects.create(
        delivery=delivery,
        number=delivery.attempts,
        started_at=started,
        latency_ms=latency_ms,
        response_code=code,
        ok=ok,
        error=error,
    )
    return settle(delivery, ok, timezone.now())


def post(delivery: WebhookDelivery) -> tuple[int | None, str]:
    """(response code or None, what went wrong). Never raises for the receiver's faults."""
    body = delivery.body.encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "revreview-webhooks/1",
        "X-Revreview-Event": "run.finished",
        "X-Revreview-Delivery": str(delivery.pk),
        signing.HEADER: signing.sign(delivery.subscription.secret, body, now=time.time()),
    }
    try:
        response = httpx.post(
            delivery.subscription.url,
            content=body,
            headers=headers,
            timeout=float(settings.WEBHOOK_TIMEOUT_SECONDS),
            follow_redirects=False,
        )
    except httpx.HTTPError as error:
        return None, f"{type(error).__name__}: {error}"[:ERROR_EXCERPT]
    if 200 <= response.status_code < 300:
        return response.status_code, ""
    return response.status_code, response.text[:ERROR_EXCERPT]


def settle(delivery: WebhookDelivery, ok: bool, now: datetime) -> float | None:
    status, next_at, delay = WebhookDelivery.Status.DELIVERED, None, None
    if not ok:
        delay = retry_delay(delivery.attempts)
        window = timedelta(seconds=settings.WEBHOOK_RETRY_WINDOW_SECONDS)
        if now + timedelta(seconds=delay) - delivery.created_at > window:
            status, delay = WebhookDelivery.Status.FAILED, None
            logger.warning("webhook delivery %s failed for good", delivery.pk)
        else:
            status, next_at = WebhookDelivery.Status.PENDING, now + timedelta(seconds=delay)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status=status,
        next_attempt_at=next_at,
        finished_at=None if status == WebhookDelivery.Status.PENDING else now,
    )
    return delay


def overdue(grace_seconds: int) -> list[int]:
    """Deliveries whose attempt is overdue (its task was lost), and those stuck in
    `sending` (a worker died mid-attempt), put back to pending and due now."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.WEBHOOK_TIMEOUT_SECONDS + grace_seconds)
    stuck = list(
        WebhookDelivery.objects.filter(
            status=WebhookDelivery.Status.SENDING, claimed_at__lt=stale
        ).values_list("pk", flat=True)[:1000]
    )
    WebhookDelivery.objects.filter(pk__in=stuck, status=WebhookDelivery.Status.SENDING).update(
        status=WebhookDelivery.Status.PENDING, next_attempt_at=now
    )
    late = WebhookDelivery.objects.filter(
        status=WebhookDelivery.Status.PENDING,
        next_attempt_at__lt=now - timedelta(seconds=grace_seconds),
    ).values_list("pk", flat=True)[:1000]
    return sorted({*stuck, *late})
