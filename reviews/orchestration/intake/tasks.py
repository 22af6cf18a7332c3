"""The intake's tasks: reading a stored upload (the accept message, sent by the intake
for an upload too big for the web process and by the sweep for one left unread) and
importing the spool.

Apart from run/tasks.py because they call submit, which dispatches the review tasks:
one module for both would import itself in a circle. The worker loads it through the
Celery app's `include` (revreview.celery)."""

from __future__ import annotations

import logging
from datetime import datetime

from celery import shared_task
from django.conf import settings
from django.db import connection

from ledger.ratelimit import legacy_rate_keys
from reviews.engine.ingest import IngestError
from reviews.models import Batch
from reviews.orchestration.intake import spool_import, submit
from reviews.orchestration.run import limits
from reviews.orchestration.store import unread
from reviews.orchestration.store.unread import ACCEPT_UPLOAD

logger = logging.getLogger(__name__)


DATABASE_RETRIES = 30  # reads retried while the database is away


@shared_task(
    name=ACCEPT_UPLOAD,
    bind=True,
    # A process killed under the read (the kernel's OOM killer, for a batch too big for
    # the machine) sends the read again, RUN_RETRY_LIMIT times; then the batch is
    # rejected saying so (reviews.orchestration.run.tasks.task_killed), not read forever.
    retry_on_worker_lost=True,
    max_retries=settings.RUN_RETRY_LIMIT,
    soft_time_limit=settings.SPECIALIST_SOFT_TIME_LIMIT,
    time_limit=settings.SPECIALIST_TIME_LIMIT,
)
def accept_upload(
    self,
    *,
    batch_id: int,
    as_of: str | None = None,
    rate_keys: list[str] | None = None,
    dataset: str | None = None,
    client_ip: str | None = None,
) -> None:
    """Read and serve a stored upload, then start its review: the accept message (the
    batch id; what the upload asked for is on its row). The database going away
    meanwhile is retried (every 2, 4, ... up to 30 s; past the retries the sweep finds
    the batch unread): the upload is stored, so it is never left unread. `as_of`,
    `rate_keys`, `dataset` and `client_ip`: a message sent before batches kept their
    request, still queued; recorded on the batch first."""
    try:
        if as_of or rate_keys or dataset or client_ip:
            _record_queued_request(
                batch_id, as_of, rate_keys or legacy_rate_keys(client_ip), dataset
            )
        submit.accept_stored_upload(batch_id)
    except Exception as error:
        final = limits.final_cause(error)  # out of memory, the soft time limit
        if final is None and isinstance(error, submit.unreachable_errors()):
            connection.close()  # a broken connection is not reused by the retry
            logger.warning("batch %s: database unreachable while reading it; retrying", batch_id)
            countdown = min(30, 2 ** (self.request.retries + 1))
            raise self.retry(exc=error, countdown=countdown, max_retries=DATABASE_RETRIES) from None
        # Rolled back with the read: rejected here, saying why, never left unread.
        why = limits.reason(final) if final else f"{type(error).__name__}; re-upload it"
        limits.recorded(lambda: unread.give_up(batch_id, why))
        raise


def _record_queued_request(
    batch_id: int, as_of: str | None, rate_keys: list[str] | None, dataset: str | None
) -> None:
    batch = Batch.objects.filter(pk=batch_id, status=Batch.Status.RECEIVED).first()
    if batch is None:  # read already, or gone
        return
    try:
        submit.name_request(
            batch,
            as_of=datetime.fromisoformat(as_of) if as_of else None,
            dataset=dataset,
            rate_keys=rate_keys,
        )
    except IngestError as error:
        submit.reject(batch, error.errors)


@shared_task(
    name="reviews.import_spool",
    soft_time_limit=settings.SPECIALIST_SOFT_TIME_LIMIT,
    time_limit=settings.SPECIALIST_TIME_LIMIT,
)
def import_spool() -> None:
    """Import the uploads spooled while the database was down (sent by the sweep). Stops
    taking new ones well before the soft limit; the rest wait for the next sweep."""
    report = spool_import.import_spool(seconds=settings.SPECIALIST_SOFT_TIME_LIMIT / 2)
    logger.warning(
        "spool: imported %s, failed %s, waiting %s",
        len(report.imported),
        len(report.failed),
        len(report.waiting),
    )
