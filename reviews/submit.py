"""From uploaded files to a queued review: store first, then parse, then plan the run.

Used by the dashboard, the CLI and (later) the API, so every entry point creates the
same rows. Nothing is lost: the bytes are committed before parsing starts."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db import transaction

from reviews import batch as plain
from reviews.ingest import IngestError, UploadedFile, parse_upload
from reviews.models import AgentRun, Batch, BatchFile, ReviewRun
from reviews.risk import classify_risk
from reviews.specialists import NAMES

logger = logging.getLogger(__name__)


class UploadTooLarge(Exception):
    pass


@dataclass(slots=True)
class Submission:
    batch: Batch
    run: ReviewRun | None = None
    errors: list[str] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return self.run is not None


def submit(
    files: list[UploadedFile],
    *,
    created_by=None,
    as_of: datetime | None = None,
    dispatch: bool = True,
) -> Submission:
    """Store, parse and (if valid) queue a review. `dispatch=False` leaves the run queued
    for the caller to execute (the CLI runs it in-process)."""
    batch = store_upload(files, created_by=created_by)
    try:
        parsed = accept(batch, as_of=as_of)
    except IngestError as error:
        return Submission(batch=batch, errors=error.errors)
    run = create_run(batch, parsed, created_by=created_by)
    if dispatch:
        dispatch_review(run)
    return Submission(batch=batch, run=run)


def store_upload(files: list[UploadedFile], *, created_by=None) -> Batch:
    """Keep the upload byte for byte, before anything reads it."""
    if not files:
        raise IngestError(["no file uploaded"])
    total = sum(len(f.data) for f in files)
    if total > settings.MAX_UPLOAD_BYTES:
        raise UploadTooLarge(
            f"upload is {total:,} bytes; the limit is {settings.MAX_UPLOAD_BYTES:,} bytes "
            "(MAX_UPLOAD_BYTES)"
        )
    digests = [hashlib.sha256(f.data).hexdigest() for f in files]
    sha256 = _combined_sha256(digests)
    with transaction.atomic():
        batch = Batch.objects.create(
            file_name=", ".join(f.name for f in files)[:500],
            sha256=sha256,
            size_bytes=total,
            created_by=created_by,
        )
        BatchFile.objects.bulk_create(
            BatchFile(batch=batch, name=f.name, sha256=d, size_bytes=len(f.data), data=f.data)
            for f, d in zip(files, digests, strict=True)
        )
    return batch


def stored_sha256(files: list[UploadedFile]) -> str:
    """The sha256 a Batch of these files gets."""
    return _combined_sha256([hashlib.sha256(f.data).hexdigest() for f in files])


def _combined_sha256(digests: list[str]) -> str:
    # One file: its own hash. Several (a CSV export): a hash over the sorted file hashes.
    if len(digests) == 1:
        return digests[0]
    return hashlib.sha256("".join(sorted(digests)).encode()).hexdigest()


def accept(batch: Batch, *, as_of: datetime | None = None) -> plain.Batch:
    """Parse the stored files; mark the batch accepted (with counts and its as-of time)
    or rejected (with every error). Raises IngestError when rejected."""
    try:
        parsed = parse_upload(stored_files(batch), as_of=as_of, received_at=batch.created_at)
    except IngestError as error:
        batch.status = Batch.Status.REJECTED
        batch.errors = error.errors
        batch.save(update_fields=["status", "errors"])
        logger.info("batch %s rejected: %d errors", batch.pk, len(error.errors))
        raise
    batch.status = Batch.Status.ACCEPTED
    batch.external_id = (parsed.id or "")[:200]
    batch.source = (parsed.source or "")[:50]
    batch.as_of = parsed.as_of
    batch.companies, batch.contacts, batch.deals = (
        len(parsed.companies),
        len(parsed.contacts),
        len(parsed.deals),
    )
    batch.save()
    _cache_parsed(batch.pk, parsed)
    return parsed


def stored_files(batch: Batch) -> list[UploadedFile]:
    return [UploadedFile(name=f.name, data=bytes(f.data)) for f in batch.files.all()]


def create_run(batch: Batch, parsed: plain.Batch, *, created_by=None) -> ReviewRun:
    risk = classify_risk(parsed, settings.REVIEW_RULES)
    with transaction.atomic():
        run = ReviewRun.objects.create(
            batch=batch, tier=risk.tier, as_of=parsed.as_of, created_by=created_by
        )
        AgentRun.objects.bulk_create(
            AgentRun(run=run, agent=name) for name in (*NAMES, AgentRun.COORDINATOR)
        )
    return run


def dispatch_review(run: ReviewRun) -> None:
    from reviews.tasks import start_review  # tasks import this module

    # On commit, so a worker never picks up a run it cannot see yet.
    transaction.on_commit(lambda: start_review.delay(run_id=run.pk))


# --- the parsed batch, for the tasks ----------------------------------------------
# Parsing a large batch takes seconds; the specialists of one run (and the coordinator)
# in the same process share one parse. Stored batches never change, so the id is the key.

_parsed: dict[int, plain.Batch] = {}


def _cache_parsed(batch_id: int, parsed: plain.Batch) -> None:
    _parsed.clear()  # keep one: a million-record batch is large
    _parsed[batch_id] = parsed


def load_parsed(batch: Batch) -> plain.Batch:
    if batch.pk not in _parsed:
        files = stored_files(batch)
        _cache_parsed(
            batch.pk, parse_upload(files, as_of=batch.as_of, received_at=batch.created_at)
        )
    return _parsed[batch.pk]


def rerun(run: ReviewRun, *, created_by=None) -> ReviewRun:
    """A fresh review of a run's batch (the re-run button; bypasses any cache)."""
    parsed = load_parsed(run.batch)
    new_run = create_run(run.batch, parsed, created_by=created_by)
    dispatch_review(new_run)
    return new_run
