"""The store: raw uploads and each batch's tables, as objects under keys, in a local
folder or in S3-compatible object storage (settings.STORAGES["batches"],
revreview/store_settings.py). Django's Storage API over both, so this module does not
care which.

Every key of a batch sits under `batches/<id>/`, so deleting a batch deletes one prefix.
Bytes go in streamed (read in chunks, hashed on the way) and come out streamed or to a
file: a 200 MB upload never sits whole in memory on its way in."""

from __future__ import annotations

import contextlib
import hashlib
import io
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from django.core.files import File
from django.core.files.storage import Storage, storages

ALIAS = "batches"
_CHUNK = 1024 * 1024


class MissingObject(FileNotFoundError):
    """The store holds nothing under this key."""


class StoreUnavailable(Exception):
    """The store did not take an object: a bucket missing, a server down, a disk full."""


@dataclass(frozen=True, slots=True)
class Stored:
    key: str
    sha256: str
    size: int


def backend() -> Storage:
    return storages[ALIAS]


def batch_prefix(batch_id: int) -> str:
    return f"batches/{batch_id}/"


def upload_key(batch_id: int, index: int) -> str:
    """The key of a batch's `index`th uploaded file (by index: a received name may hold
    anything)."""
    return f"{batch_prefix(batch_id)}upload/{index}"


def put(key: str, chunks: Iterable[bytes], *, size: int, label: str) -> Stored:
    """Store the bytes `chunks` yields under `key`, hashing them on the way. `size` is
    the size the sender declared: other than that, nothing is kept and ValueError says
    so, naming `label` (the file's name). StoreUnavailable when the store fails."""
    reader = _CountingReader(iter(chunks), size, label)
    # Buffered: a read of n bytes gets n (the raw reader hands out a chunk at a time),
    # so S3's parts are its full 8 MB, not one per incoming chunk.
    buffered = io.BufferedReader(reader, _CHUNK)
    try:
        stored = backend().save(key, File(buffered, name=key))
        reader.check_complete()
    except ValueError:  # the sender's bytes, not the store
        delete(key)
        raise
    except Exception as error:
        with contextlib.suppress(Exception):  # a store that failed may fail this too
            delete(key)
        raise StoreUnavailable(f"the store did not take {label}: {error}") from error
    except BaseException:
        delete(key)
        raise
    return Stored(key=stored, sha256=reader.digest.hexdigest(), size=reader.count)


def put_file(path: Path, key: str) -> None:
    """Store the local file at `path` under `key`."""
    with path.open("rb") as data:
        backend().save(key, File(data, name=key))


def open_object(key: str) -> File:
    """The object under `key`, to read in chunks (a with block closes it). Raises
    MissingObject."""
    try:
        return backend().open(key, "rb")
    except FileNotFoundError as error:
        raise MissingObject(f"the store holds nothing under {key!r}") from error


def read_bytes(key: str) -> bytes:
    """The whole object (what the parser reads). On S3 it is downloaded to a temporary
    file first, so the bytes are held once, not twice."""
    with open_object(key) as data:
        return data.read()


def chunks(key: str) -> Iterator[bytes]:
    """The object's bytes in chunks of about a megabyte."""
    with open_object(key) as data:
        yield from data.chunks(_CHUNK)


def download(key: str, path: Path) -> None:
    """Copy the object under `key` to the local file `path`."""
    with open_object(key) as data, path.open("wb") as out:
        shutil.copyfileobj(data, out, _CHUNK)


def exists(key: str) -> bool:
    return backend().exists(key)


def listing(prefix: str) -> list[str]:
    """The keys of every object under `prefix` (a folder, ending in /)."""
    folders, names = _listdir(prefix)
    keys = [prefix + name for name in names]
    for folder in folders:
        keys += listing(f"{prefix}{folder}/")
    return keys


def delete(key: str) -> None:
    """Delete the object (nothing if there is none)."""
    backend().delete(key)


def delete_prefix(prefix: str) -> int:
    """Delete every object under `prefix`; how many there were."""
    keys = listing(prefix)
    for key in keys:
        delete(key)
    _remove_empty_folders(prefix)
    return len(keys)


def _remove_empty_folders(prefix: str) -> None:
    """A local store keeps the folders its keys made; they go with their last object.
    (An object store has no folders: its backend has no local path.)"""
    try:
        top = Path(backend().path(prefix))
    except NotImplementedError:
        return
    if not top.is_dir():
        return
    for folder in sorted((p for p in top.rglob("*") if p.is_dir()), reverse=True):
        with contextlib.suppress(OSError):  # not empty: something else is kept there
            folder.rmdir()
    with contextlib.suppress(OSError):
        top.rmdir()


def _listdir(prefix: str) -> tuple[list[str], list[str]]:
    try:
        return backend().listdir(prefix)
    except FileNotFoundError:  # a local folder never made: nothing under it
        return [], []


class _CountingReader(io.RawIOBase):
    """A readable over chunks that hashes and counts what is read, refusing more than
    the declared size (not seekable: both backends then read it once, front to back)."""

    def __init__(self, chunks: Iterator[bytes], size: int, label: str) -> None:
        self._chunks, self._size, self._label = chunks, size, label
        self._pending = memoryview(b"")  # a view: handing out a part copies nothing
        self.digest = hashlib.sha256()
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self._pending:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._take(chunk)
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def _take(self, chunk: bytes) -> None:
        self.count += len(chunk)
        if self.count > self._size:
            raise ValueError(f"{self._label}: more bytes than its declared {self._size:,}")
        self.digest.update(chunk)
        self._pending = memoryview(chunk)

    def check_complete(self) -> None:
        if self.count != self._size:
            declared = f"{self._size:,}"
            raise ValueError(f"{self._label}: {self.count:,} bytes, not its declared {declared}")
