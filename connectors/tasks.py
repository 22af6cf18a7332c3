"""Celery tasks of the CRM connections: thin, by id, safe to run twice."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from connectors import notify, pulls  # noqa: F401  (notify: its task registers)
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
