"""Which stored uploads are still unread: the test the worker that reads one
(submit.accept_stored_upload) and the sweep that sends it again (sweep) share."""

from __future__ import annotations

from reviews.models import Batch


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
