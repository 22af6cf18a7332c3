"""Small builders shared by the ingest tests."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import UTC, datetime

import pytest

from reviews.engine.batch import Batch
from reviews.engine.ingest import IngestError, UploadedFile
from reviews.orchestration.store.parsed import parse  # the settings decide the limits

RECEIVED = datetime(2026, 8, 2, 12, 0, tzinfo=UTC)


def batch_doc(**lists) -> dict:
    """A minimal valid batch document; keyword arguments replace or add top-level keys."""
    return {"companies": [], "contacts": [], "deals": [], **lists}


def parse_json(doc: object, *, as_of: datetime | None = None) -> Batch:
    data = json.dumps(doc).encode()
    return parse([UploadedFile("batch.json", data)], as_of=as_of, received_at=RECEIVED)


def parse_files(*files: tuple[str, bytes | str], as_of: datetime | None = None) -> Batch:
    uploads = [
        UploadedFile(name, data.encode() if isinstance(data, str) else data) for name, data in files
    ]
    return parse(uploads, as_of=as_of, received_at=RECEIVED)


def errors_of(parse, *args, **kwargs) -> list[str]:
    with pytest.raises(IngestError) as caught:
        parse(*args, **kwargs)
    return caught.value.errors


def zipped(members: dict[str, bytes | str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()
