"""The delivery rules on their own: the backoff schedule, giving up after the window,
one send per claim, and the sweep for lost tasks."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from alerts import delivery
from alerts.models import WebhookDelivery, WebhookSubscription
from reviews.models import Dataset
from tests.alerts.receiver import Receiver
from tests.web.conftest import reviewed

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_backoff_doubles_up_to_its_cap_and_lasts_about_a_day(settings):
    settings.WEBHOOK_RETRY_BASE_SECONDS = 30
    settings.WEBHOOK_RETRY_MAX_DELAY_SECONDS = 3600
    delays = [delivery.retry_delay(n) for n in range(1, 10)]
    assert delays[:8] == [30, 60, 120, 240, 480, 960, 1920, 3600]
    assert delays[8] == 3600
    elapsed, attempts = 0.0, 1
    while elapsed + delivery.retry_delay(attempts) <= settings.WEBHOOK_RETRY_WINDOW_SECONDS:
        elapsed += delivery.retry_delay(attempts)
        attempts += 1
    assert 20 < attempts < 40  # then it gives up, a day after the first attempt


def make_delivery(url: str, **fields) -> WebhookDelivery:
    subscription = WebhookSubscription.objects.create(
        dataset=Dataset.objects.create(name="d"), url=url, secret="s"
    )
    return WebhookDelivery.objects.create(
        subscription=subscription,
        run=reviewed(),
        body='{"event":"run.finished"}',
        next_attempt_at=timezone.now(),
        **fields,
    )


def test_a_delivery_gives_up_once_the_window_is_over(redis_url, settings):
    with Receiver(statuses=[503]) as receiver:
        pending = make_delivery(receiver.url)
        assert delivery.attempt(pending.pk) == 30  # retried in 30 s
        pending.refresh_from_db()
        assert pending.status == WebhookDelivery.Status.PENDING

        # The next retry would fall outside the window: this attempt is the last.
        window = timedelta(seconds=settings.WEBHOOK_RETRY_WINDOW_SECONDS)
        WebhookDelivery.objects.filter(pk=pending.pk).update(
            created_at=timezone.now() - window + timedelta(seconds=10),
            next_attempt_at=timezone.now(),
        )
        assert delivery.attempt(pending.pk) is None
    pending.refresh_from_db()
    assert pending.status == WebhookDelivery.Status.FAILED
    assert pending.finished_at is not None
    assert [a.response_code for a in pending.attempt_log.all()] == [503, 503]


def test_a_delivery_found_after_its_window_ends_failed_without_sending(redis_url):
    with Receiver() as receiver:
        late = make_delivery(receiver.url)
        WebhookDelivery.objects.filter(pk=late.pk).update(
            created_at=timezone.now() - timedelta(days=2)
        )
        assert delivery.attempt(late.pk) is None
        assert receiver.received == []
    late.refresh_from_db()
    assert (late.status, late.attempts) == (WebhookDelivery.Status.FAILED, 0)


def test_an_attempt_not_due_or_already_claimed_sends_nothing(redis_url):
    with Receiver() as receiver:
        later = make_delivery(receiver.url)
        WebhookDelivery.objects.filter(pk=later.pk).update(
            next_attempt_at=timezone.now() + timedelta(minutes=5)
        )
        assert delivery.attempt(later.pk) is None
        WebhookDelivery.objects.filter(pk=later.pk).update(next_attempt_at=timezone.now())
        assert delivery.attempt(later.pk) is None  # delivered: status is not pending
        assert delivery.attempt(later.pk) is None  # a redelivered task: nothing more
        assert len(receiver.received) == 1


def test_an_unreachable_receiver_is_recorded_without_a_code(redis_url, settings):
    settings.WEBHOOK_TIMEOUT_SECONDS = 2
    pending = make_delivery("http://127.0.0.1:9/hook")  # the discard port: refused
    assert delivery.attempt(pending.pk) is not None
    (attempt,) = pending.attempt_log.all()
    assert attempt.response_code is None and not attempt.ok
    assert "ConnectError" in attempt.error and attempt.excerpt == ""


def test_the_sweep_finds_overdue_deliveries_and_settles_stuck_ones(redis_url):
    overdue = make_delivery("https://x.example")
    WebhookDelivery.objects.filter(pk=overdue.pk).update(
        next_attempt_at=timezone.now() - timedelta(minutes=5)
    )
    # A worker lost mid-attempt: the delivery stayed `sending`, its attempt's row says so.
    stuck = WebhookDelivery.objects.create(
        subscription=overdue.subscription,
        run=reviewed(),
        body="{}",
        status=WebhookDelivery.Status.SENDING,
        attempts=1,
        claimed_at=timezone.now() - timedelta(minutes=10),
    )
    # Another, stuck on the last attempt its window allowed.
    last = WebhookDelivery.objects.create(
        subscription=overdue.subscription,
        run=reviewed(),
        body="{}",
        status=WebhookDelivery.Status.SENDING,
        attempts=30,
        claimed_at=timezone.now() - timedelta(minutes=10),
    )
    WebhookDelivery.objects.filter(pk=last.pk).update(
        created_at=timezone.now() - timedelta(hours=23, minutes=59)
    )
    assert delivery.overdue(60) == [overdue.pk]
    stuck.refresh_from_db()
    assert stuck.status == WebhookDelivery.Status.PENDING  # retried after its backoff
    assert stuck.next_attempt_at > timezone.now()
    last.refresh_from_db()
    assert last.status == WebhookDelivery.Status.FAILED  # not re-claimed forever
