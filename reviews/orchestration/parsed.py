"""The parsed form of a stored batch, for the tasks.

Parsing a large batch takes seconds; the specialists of one run (and the coordinator)
in the same worker process share one parse. Stored batches never change, so the id is
the key. Web processes keep nothing: a million-record batch is over a gigabyte.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings

from reviews.engine import batch as plain
from reviews.engine.ingest import Limits, UploadedFile, parse_upload
from reviews.models import Batch


def parse(
    files: list[UploadedFile], *, as_of: datetime | None, received_at: datetime
) -> plain.Batch:
    """parse_upload under this deployment's limits."""
    limits = Limits(
        max_bytes=settings.MAX_UPLOAD_BYTES,
        max_errors=settings.MAX_REPORTED_ERRORS,
        date_order=settings.CSV_DATE_ORDER,
    )
    return parse_upload(files, as_of=as_of, received_at=received_at, limits=limits)


def stored_files(batch: Batch) -> list[UploadedFile]:
    return [UploadedFile(name=f.name, data=bytes(f.data)) for f in batch.files.all()]


_parsed: dict[int, plain.Batch] = {}


def keep_parsed(batch_id: int, parsed: plain.Batch) -> None:
    _parsed.clear()  # keep one
    _parsed[batch_id] = parsed


def forget_parsed() -> None:
    """Drop the kept batch (a million records hold over a gigabyte), e.g. once the CLI's
    review is done and only its report is left to write."""
    _parsed.clear()


def parse_stored(batch: Batch) -> plain.Batch:
    return parse(stored_files(batch), as_of=batch.as_of, received_at=batch.created_at)


def load_parsed(batch: Batch) -> plain.Batch:
    """The parsed batch, kept for the next task of the same run in this process."""
    parsed = _parsed.get(batch.pk)
    if parsed is None:
        parsed = parse_stored(batch)
        keep_parsed(batch.pk, parsed)
    return parsed
