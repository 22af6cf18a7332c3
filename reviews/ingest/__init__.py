"""Turn uploaded files into a validated Batch (reviews.batch), or say exactly why not.

parse_upload() takes the files as received (already stored by reviews.submit) and
returns a Batch, or raises IngestError listing every structural problem (up to a cap),
each naming the record and field."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from reviews.batch import Batch


@dataclass(frozen=True, slots=True)
class UploadedFile:
    name: str
    data: bytes


class IngestError(Exception):
    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors[:3]))
        self.errors = errors


def parse_upload(
    files: list[UploadedFile], *, as_of: datetime | None, received_at: datetime
) -> Batch:
    raise IngestError(["ingest not implemented yet"])
