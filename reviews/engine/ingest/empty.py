"""An empty file is called empty, by its name: a 0-byte export is a failed download or a
save gone wrong, and "not JSON: Expecting value at line 1 column 1" says neither."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from reviews.engine.ingest.errors import IngestError

_BOM = b"\xef\xbb\xbf"
# A file of blanks longer than this is no export anyone saved: not read to say so.
_BLANKS_LOOKED_AT = 64 * 1024


class _File(Protocol):
    name: str
    data: bytes


def refuse_empty(files: Sequence[_File]) -> None:
    """Raise IngestError naming every file that holds nothing, or only blanks."""
    errors = [
        f"{file.name or 'the upload'}: the file is empty ({why})"
        for file in files
        if (why := _emptiness(file.data))
    ]
    if errors:
        raise IngestError(errors)


def _emptiness(data: bytes) -> str | None:
    if not len(data):  # a read-only mmap has no truth value of its own
        return "0 bytes"
    if len(data) <= _BLANKS_LOOKED_AT and not bytes(data).removeprefix(_BOM).strip():
        return "only blank lines or spaces"
    return None
