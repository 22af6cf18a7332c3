"""Which stored uploads are still unread, and the one message that asks a worker to read
one: what the worker that reads it (submit.accept_stored_upload), the intake that hands
it over (reviews.orchestration.intake.entry) and the sweep that sends it again
(reviews.orchestration.run.sweep) share."""

from __future__ import annotations

import logging

from django.db import transaction

from reviews.engine.storable import storable
from reviews.models import Batch

logger = logging.getLogger(__name__)


# The task that reads a stored upload (reviews.orchestration.intake.tasks.accept_upload).
ACCEPT_UPLOAD = "reviews.accept_upload"


def accept_message(batch_id: int) -> dict[str, int]:
    """The accept message's arguments: the batch id only. What the upload asked for (its
    as-of time, dataset and rate-limit keys) is on the batch row, so a message sent
    again by the sweep reads it exactly as the first would have."""
    return {"batch_id": batch_id}


def unread(batch_id: int) -> bool:
    """Stored and not yet served: received, or accepted with no run and not refused
    (the database went away between the two)."""
    batch = Batch.objects.filter(pk=batch_id).first()
    if batch is None or batch.status == Batch.Status.REJECTED:
        return False
    if batch.status == Batch.Status.RECEIVED:
        return True
    refused = any(str(e).startswith("refused:") for e in batch.errors or [])
    return not refused and not batch.runs.exists()


def give_up(batch_id: int, why: str) -> bool:
    """Reject a stored upload no worker could read (out of memory, past its task's time
    limit), saying why: never left received for the sweep to send again and again. The
    bytes stay as received. False if it was read (or rejected) meanwhile: a reader that
    holds the batch's row is waited for, and what it decided stands."""
    with transaction.atomic():
        batch = Batch.objects.select_for_update().filter(pk=batch_id).first()
        if batch is None or not unread(batch_id):
            return False
        batch.status = Batch.Status.REJECTED
        batch.errors = [*batch.errors, storable(f"the upload could not be read: {why}")]
        batch.save(update_fields=["status", "errors"])
    logger.warning("batch %s: rejected, unread: %s", batch_id, why)
    return True
