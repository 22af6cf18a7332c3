"""Making deliveries for a finished run and attempting them.

Each attempt is claimed with a conditional update (pending and due -> sending), so a
task that runs twice (a redelivered Celery message, the sweep) sends once. The HTTP
call happens outside any transaction: a slow receiver must not hold a database lock."""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from alerts import destinations, payloads, signing, transport
from alerts.models import WebhookAttempt, WebhookDelivery, WebhookSubscription
from alerts.transport import Answer
from reviews.models import ReviewRun

logger = logging.getLogger(__name__)

ERROR_CHARS = 300  # of our own account of what went wrong (never the receiver's words)
# On an attempt's row until the attempt ends: what it says if its worker is lost mid-way.
CUT_SHORT = "no outcome: the attempt was cut short (its worker stopped)"


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


def attempt(delivery_id: int, *, resolver: destinations.Resolver | None = None) -> float | None:
    """Send one attempt of a due delivery and record it. Returns the seconds until the
    next attempt, or None when there is none (delivered, given up, or not ours to send).

    The attempt's row is written before anything is sent, so an attempt whose worker is
    lost mid-way is on record too (with what it was cut short by). `resolver` is where
    the host's name is looked up (the system's by default)."""
    now = timezone.now()
    window = timedelta(seconds=settings.WEBHOOK_RETRY_WINDOW_SECONDS)
    # Past its window a delivery is not sent again: it ends here (a late sweep, a lost task).
    if WebhookDelivery.objects.filter(
        pk=delivery_id, status=WebhookDelivery.Status.PENDING, created_at__lt=now - window
    ).update(status=WebhookDelivery.Status.FAILED, next_attempt_at=None, finished_at=now):
        logger.warning("webhook delivery %s failed for good: its retry window closed", delivery_id)
        return None
    claimed = WebhookDelivery.objects.filter(
        pk=delivery_id, status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=now
    ).update(status=WebhookDelivery.Status.SENDING, attempts=F("attempts") + 1, claimed_at=now)
    if not claimed:
        return None
    delivery = WebhookDelivery.objects.select_related("subscription").get(pk=delivery_id)
    started = timezone.now()
    record = WebhookAttempt.objects.create(
        delivery=delivery,
        number=delivery.attempts,
        started_at=started,
        latency_ms=0,
        ok=False,
        error=CUT_SHORT,
    )
    answer, final = post(delivery, resolver or destinations.system_resolver)
    WebhookAttempt.objects.filter(pk=record.pk).update(
        latency_ms=int((timezone.now() - started).total_seconds() * 1000),
        response_code=answer.code,
        ok=answer.ok,
        error=answer.error,
        excerpt=answer.excerpt,
        address=answer.address,
    )
    return settle(delivery, answer.ok, timezone.now(), final=final)


def deadline_seconds() -> float:
    """One attempt's whole time: resolving, connecting, sending and reading."""
    return float(settings.WEBHOOK_TIMEOUT_SECONDS)


def post(delivery: WebhookDelivery, resolver: destinations.Resolver) -> tuple[Answer, bool]:
    """(what came back, whether the destination is refused for good). The destination
    is checked now, with its name resolved now, and the POST goes to the checked
    address. Never raises for the receiver's faults."""
    body = delivery.body.encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "revreview-webhooks/1",
        "X-Revreview-Event": "weekly_digest" if delivery.digest else "run.finished",
        "X-Revreview-Delivery": str(delivery.pk),
        signing.HEADER: signing.sign(delivery.subscription.secret, body, now=time.time()),
    }
    total = deadline_seconds()
    began = time.monotonic()
    try:
        destination, address = destinations.pin(delivery.subscription.url, resolver, seconds=total)
    except destinations.Refused as error:
        logger.warning("webhook delivery %s refused: %s", delivery.pk, error)
        return Answer(None, error=f"refused: {error}"[:ERROR_CHARS]), True
    except destinations.Unresolvable as error:
        return Answer(None, error=str(error)[:ERROR_CHARS]), False
    answer = transport.post(
        destination, address, body, headers, deadline_seconds=total, started=began
    )
    return answer, False


def settle(
    delivery: WebhookDelivery, ok: bool, now: datetime, *, final: bool = False
) -> float | None:
    """After an attempt: delivered, pending until the next one, or failed (the next
    would fall outside the retry window, or the destination is refused for good)."""
    status, next_at, delay = WebhookDelivery.Status.DELIVERED, None, None
    if not ok:
        delay = retry_delay(delivery.attempts)
        window = timedelta(seconds=settings.WEBHOOK_RETRY_WINDOW_SECONDS)
        if final or now + timedelta(seconds=delay) - delivery.created_at > window:
            status, delay = WebhookDelivery.Status.FAILED, None
            logger.warning("webhook delivery %s failed for good", delivery.pk)
        else:
            status, next_at = WebhookDelivery.Status.PENDING, now + timedelta(seconds=delay)
    WebhookDelivery.objects.filter(pk=delivery.pk, status=WebhookDelivery.Status.SENDING).update(
        status=status,
        next_attempt_at=next_at,
        finished_at=None if status == WebhookDelivery.Status.PENDING else now,
    )
    return delay


def overdue(grace_seconds: int) -> list[int]:
    """Deliveries whose attempt is overdue (its task was lost) and those stuck in
    `sending` (a worker died mid-attempt). A stuck one is settled as the failed attempt
    it was (its row says it was cut short): pending with its backoff, or failed when the
    window is over. Returns the pending ones that are due; attempt() ends those whose
    window has closed."""
    now = timezone.now()
    stale = now - timedelta(seconds=deadline_seconds() + grace_seconds)
    stuck = WebhookDelivery.objects.filter(
        status=WebhookDelivery.Status.SENDING, claimed_at__lt=stale
    ).order_by("pk")[:1000]
    for delivery in stuck:
        logger.warning("webhook delivery %s: its attempt was cut short", delivery.pk)
        settle(delivery, False, now)
    late = WebhookDelivery.objects.filter(
        status=WebhookDelivery.Status.PENDING,
        next_attempt_at__lt=now - timedelta(seconds=grace_seconds),
    ).values_list("pk", flat=True)[:1000]
    return sorted(late)
