"""Model calls whose worker died mid-call: `pending` rows never settled become `lost`.

A row is written before each request is sent (reviews.llm.chain) and settled when the
reply or the error comes back, which is at most LLM_TIMEOUT_SECONDS later. A row still
pending well past that belongs to a worker that was killed (or lost its database) with
the request out: the gateway had it, so its tokens sent stay counted, as `lost`."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from ledger.models import LedgerEntry

logger = logging.getLogger(__name__)

GRACE_SECONDS = 60  # past the call's own timeout, for the row to be settled


def lost_after() -> timedelta:
    """How long a row may stay pending before it is taken as lost."""
    return timedelta(seconds=float(settings.LLM_TIMEOUT_SECONDS) + GRACE_SECONDS)


def mark_lost(now: datetime | None = None) -> int:
    """Mark the pending rows older than lost_after() lost; how many there were."""
    cutoff = (now or timezone.now()) - lost_after()
    lost = LedgerEntry.objects.filter(
        outcome=LedgerEntry.Outcome.PENDING, created_at__lt=cutoff
    ).update(outcome=LedgerEntry.Outcome.LOST)
    if lost:
        logger.warning("ledger: %s model call(s) never settled; marked lost", lost)
    return lost
