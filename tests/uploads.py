"""Small helpers to submit test batches through the real submit path."""

from __future__ import annotations

import json
from pathlib import Path

from reviews.engine.ingest import UploadedFile

DATA = Path(__file__).parent / "data"


def upload(name: str) -> UploadedFile:
    return UploadedFile(name=name, data=(DATA / name).read_bytes())


def json_upload(batch: dict, name: str = "batch.json") -> UploadedFile:
    return UploadedFile(name=name, data=json.dumps(batch).encode())
