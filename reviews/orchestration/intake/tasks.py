"""Uploads too big for the web process: stored there, read and served by a worker.

Apart from tasks.py because it calls submit, which dispatches the review tasks: one
module for both would import itself in a circle. The worker loads it through the
Celery app's `include` (revreview.celery)."""

from __future__ import annotations

import logging
from datetime import datetime

from celery import shared_task
from django.conf import settings
from django.db import connection, transaction

from ledger.ratelimit import legacy_rate_keys
from reviews.engine.ingest.json_batch import dataset_name_problem
from reviews.models import Batch, Dataset
from reviews.orchestration.intake import spool_import, submit
from reviews.orchestration.run import limits
from reviews.orchestration.run.tasks import ACCEPT_UPLOAD
from reviews.orchestration.store import unread

logger = logging.getLogger(__name__)


def accept_later(
    batch: Batch, *, as_of: datetime | None, rate_keys: list[str] | None, dataset: str | None = None
) -> None:
    """Hand a stored upload to a worker to parse and serve: the web process never holds
    a big batch parsed (a million records are over 1 GB). The as-of time and dataset go
    on the batch too, for the sweep to send it again with them if the message is lost."""
    keep_for_sweep(batch, as_of=as_of, dataset=dataset)
    kwargs = {
        "batch_id": batch.pk,
        "as_of": as_of.isoformat() if as_of else None,
        "rate_keys": rate_keys,
        "dataset": dataset,
    }
    transaction.on_commit(lambda: accept_upload.delay(**kwargs))


def keep_for_sweep(batch: Batch, *, as_of: datetime | None, dataset: str | None) -> None:
    fields = {"as_of": as_of} if as_of else {}
    name = dataset.strip() if dataset else ""
    if name and dataset_name_problem(name) is None:
        fields["dataset"] = Dataset.objects.get_or_create(name=name)[0]
    if fields:
        Batch.objects.filter(pk=batch.pk).update(**fields)


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
    as_of: str | None,
    rate_keys: list[str] | None = None,
    dataset: str | None = None,
    client_ip: str | None = None,
) -> None:
    """Parse and serve a stored upload, then start its review. (`client_ip`: a message
    sent before rate_keys, still queued.) The database going away meanwhile is retried
    (every 2, 4, ... up to 30 s; past the retries the sweep finds the batch unread): the
    upload is stored, so it is never left unread."""
    keys = rate_keys if rate_keys is not None else legacy_rate_keys(client_ip)
    try:
        submit.accept_stored_upload(batch_id, as_of=as_of, rate_keys=keys, dataset=dataset)
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
