"""The parsed form of a stored batch, for the tasks, the fix plan and tuning.

Parsing a large batch takes seconds. A batch whose tables are kept (a dataset's sync:
tables.py) is read back from them instead, for about two thirds of a parse's CPU and
equal to it (reviews/engine/tables/records.py); the specialists of one run (and the
coordinator) in the same worker process share one read. Stored batches never change,
so the id is the key. Web processes keep nothing: a million-record batch is over a
gigabyte.
"""

from __future__ import annotations

import logging
from datetime import datetime

from django.conf import settings

from reviews.engine import batch as plain
from reviews.engine.ingest import Limits, UploadedFile, parse_upload
from reviews.engine.ingest.pipelines import pipelines_from_data
from reviews.engine.tables.store import META, read_parsed
from reviews.models import Batch
from reviews.orchestration.store.blob_store import file_bytes
from reviews.orchestration.store.table_files import fetch_tables, tables_folder

logger = logging.getLogger(__name__)


def parse(
    files: list[UploadedFile],
    *,
    as_of: datetime | None,
    received_at: datetime,
    pipelines: list | None = None,
) -> plain.Batch:
    """parse_upload under this deployment's limits; `pipelines`: a dataset's stored
    deal pipelines (Dataset.pipelines)."""
    limits = Limits(
        max_bytes=settings.MAX_UPLOAD_BYTES,
        max_errors=settings.MAX_REPORTED_ERRORS,
        date_order=settings.CSV_DATE_ORDER,
        encoding=settings.CSV_ENCODING,
        max_cells=settings.SPREADSHEET_MAX_CELLS,
    )
    return parse_upload(
        files,
        as_of=as_of,
        received_at=received_at,
        limits=limits,
        known_pipelines=known_pipelines(pipelines) if pipelines else None,
    )


def known_pipelines(stored: list) -> dict[str, plain.Pipeline]:
    """A dataset's (or a batch's copy of its) stored pipelines, by id."""
    return pipelines_from_data(stored or [], source="dataset")


def stored_files(batch: Batch) -> list[UploadedFile]:
    """The batch's files as received, read back from the store (or, stored before the
    store kept uploads, from their rows)."""
    return [UploadedFile(name=f.name, data=file_bytes(f)) for f in batch.files.all()]


# (batch id, content key) -> its parse: a re-run that refreshed the batch's pipelines
# gives it a new content key, so a parse made with the old ones is not reused.
_parsed: dict[tuple[int, str], plain.Batch] = {}


def keep_parsed(batch_id: int, parsed: plain.Batch, content_key: str = "") -> None:
    _parsed.clear()  # keep one
    _parsed[(batch_id, content_key)] = parsed


def forget_parsed(batch_id: int | None = None) -> None:
    """Drop the kept batch (a million records hold over half a gigabyte), e.g. once the
    CLI's review is done and only its report is left to write; with `batch_id`, only if
    it is that batch's."""
    if batch_id is None or any(kept_id == batch_id for kept_id, _ in _parsed):
        _parsed.clear()


def read_stored(batch: Batch) -> plain.Batch:
    """The batch as parsed: read back from its tables where a machine kept them (here,
    or in the store), else parsed from its upload."""
    folder = tables_folder(batch)
    if not (folder / META).exists():
        fetch_tables(batch)
    try:
        parsed = read_parsed(folder)
    except Exception:  # the tables are a copy: whatever spoilt them, the upload stands
        logger.exception("batch %s: its tables could not be read back; parsed", batch.pk)
        parsed = None
    return parsed if parsed is not None else parse_stored(batch)


def parse_stored(batch: Batch) -> plain.Batch:
    return parse(
        stored_files(batch),
        as_of=batch.as_of,
        received_at=batch.created_at,
        pipelines=batch.pipelines,
    )


def load_parsed(batch: Batch) -> plain.Batch:
    """The parsed batch, kept for the next task of the same run in this process."""
    parsed = _parsed.get((batch.pk, batch.content_key))
    if parsed is None:
        # Another run's batch goes first: a process taking turns between concurrent
        # big runs would otherwise hold two parsed batches while it parses the second.
        _parsed.clear()
        parsed = read_stored(batch)
        keep_parsed(batch.pk, parsed, batch.content_key)
    return parsed
