"""Uploaded bytes into the store, streamed: a 200 MB upload never sits in the web
process's memory. Each file is read in chunks from where it was received (the temporary
file Django's upload handler left on disk, or a spool folder), hashed on the way, and
written to the store (revreview/store.py); its BatchFile row keeps its name, sha256,
size and key. The bytes are written before the row's transaction commits: a commit that
fails leaves them behind, unreferenced (on Postgres, where ids are not reused, they
only take room)."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from reviews.models import Batch, BatchFile
from revreview import store


@dataclass(frozen=True, slots=True)
class Source:
    """One received file: its name, size and a way to read its bytes in chunks."""

    name: str
    size: int
    chunks: Callable[[], Iterable[bytes]]


def copy_into(batch: Batch, sources: list[tuple[str, Source]]) -> list[str]:
    """Store each (stored name, source) as a BatchFile of `batch`; the sha256 of each.
    Call inside the transaction that created `batch`. Raises ValueError when a file's
    bytes are not its declared size; what was stored of the batch's files is then
    deleted (the transaction rolls its rows back)."""
    written: list[str] = []
    digests: list[str] = []
    try:
        for index, (name, source) in enumerate(sources):
            key = store.upload_key(batch.pk, index)
            written.append(key)
            stored = store.put(key, source.chunks(), size=source.size, label=name)
            BatchFile.objects.create(
                batch=batch, name=name, sha256=stored.sha256, size_bytes=stored.size, key=stored.key
            )
            digests.append(stored.sha256)
    except BaseException:
        for key in written:
            with contextlib.suppress(Exception):  # a store that failed may fail this too
                store.delete(key)
        raise
    return digests


def file_bytes(file: BatchFile) -> bytes:
    """A stored file's bytes: from the store, or from its row when it was stored before
    the store kept uploads."""
    if file.key:
        return store.read_bytes(file.key)
    return bytes(file.data or b"")


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
