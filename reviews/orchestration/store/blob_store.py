"""Uploaded bytes into BatchFile rows, streamed: a 200 MB upload never sits in the web
process's memory.

Django's client-side parameter binding would turn the bytes into a hex literal twice
their size, on top of the bytes themselves; so on Postgres each file goes in through
`COPY ... FROM STDIN (FORMAT binary)`, written chunk by chunk from the temporary file
Django's upload handler left on disk, hashed on the way. Other databases (SQLite in
the embedded mode) take an ordinary insert of the joined bytes."""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from django.db import connection

from reviews.models import Batch, BatchFile


@dataclass(frozen=True, slots=True)
class Source:
    """One received file: its name, size and a way to read its bytes in chunks."""

    name: str
    size: int
    chunks: Callable[[], Iterable[bytes]]


def copy_into(batch: Batch, sources: list[tuple[str, Source]]) -> list[str]:
    """Store each (stored name, source) as a BatchFile of `batch`; the sha256 of each.
    Call inside the transaction that created `batch`."""
    if connection.vendor == "postgresql":
        return [_copy_postgres(batch.pk, name, source) for name, source in sources]
    digests = []
    for name, source in sources:
        data = b"".join(source.chunks())
        digest = hashlib.sha256(data).hexdigest()
        BatchFile.objects.create(
            batch=batch, name=name, sha256=digest, size_bytes=len(data), data=data
        )
        digests.append(digest)
    return digests


_TABLE = BatchFile._meta.db_table
# PGCOPY binary format: signature, flags, header extension length.
_HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0)
_TRAILER = struct.pack("!h", -1)


def _copy_postgres(batch_id: int, name: str, source: Source) -> str:
    """One row, its data written as it is read: the sha256 column comes last, so it is
    known by the time it is written."""
    digest = hashlib.sha256()
    encoded_name = name.encode()
    sql = (
        f'COPY "{_TABLE}" (batch_id, name, size_bytes, data, sha256) '  # noqa: S608 (model's table)
        "FROM STDIN (FORMAT binary)"
    )
    with connection.cursor() as cursor, cursor.cursor.copy(sql) as copy:
        copy.write(_HEADER)
        copy.write(struct.pack("!h", 5))
        copy.write(struct.pack("!iq", 8, batch_id))
        copy.write(struct.pack("!i", len(encoded_name)) + encoded_name)
        copy.write(struct.pack("!iq", 8, source.size))
        copy.write(struct.pack("!i", source.size))
        written = 0
        for chunk in _rechunk(source.chunks()):
            written += len(chunk)
            if written > source.size:
                raise ValueError(f"{name}: more bytes than its declared {source.size:,}")
            digest.update(chunk)
            copy.write(chunk)
        if written != source.size:
            raise ValueError(f"{name}: {written:,} bytes, not its declared {source.size:,}")
        hexdigest = digest.hexdigest()
        copy.write(struct.pack("!i", len(hexdigest)) + hexdigest.encode())
        copy.write(_TRAILER)
    return hexdigest


def combined_sha256(digests: list[str]) -> str:
    """The sha256 a Batch of files with these sha256s gets: one file, its own; several
    (a CSV export), a hash over the sorted file hashes."""
    if len(digests) == 1:
        return digests[0]
    return hashlib.sha256("".join(sorted(digests)).encode()).hexdigest()


def files_sha256(files: Iterable[Source]) -> str:
    """combined_sha256 of files read in chunks (never all in memory)."""
    digests = []
    for source in files:
        digest = hashlib.sha256()
        for chunk in source.chunks():
            digest.update(chunk)
        digests.append(digest.hexdigest())
    return combined_sha256(digests)


def _rechunk(chunks: Iterable[bytes], size: int = 1024 * 1024) -> Iterator[bytes]:
    """Chunks of about `size` bytes: fewer round trips than Django's 64 KB reads."""
    pending: list[bytes] = []
    length = 0
    for chunk in chunks:
        pending.append(chunk)
        length += len(chunk)
        if length >= size:
            yield b"".join(pending)
            pending, length = [], 0
    if pending:
        yield b"".join(pending)
