"""The spool: uploads received while the database was unreachable, kept on disk until it
is back (reviews.orchestration.intake.spool_import stores them then).

One folder per upload under SPOOL_DIR: `meta.json` (who sent it, when, the form's
fields, the error), `files/0`, `files/1`, ... (the bytes as received; by index, since
a received name may hold anything) and, once an import failed, `import_error.json`.
A folder is written under a temporary name and renamed when complete, so an importer
never sees half an upload. No database and
no Celery here: the web process writes it while the database is down, and the sweep
lists it (reviews.orchestration.run.sweep)."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.conf import settings

from reviews.orchestration.store.blob_store import Source

META = "meta.json"
FILES = "files"
IMPORT_ERROR = "import_error.json"  # beside meta.json, which stays as written
_TEMP_PREFIX = ".tmp-"

logger = logging.getLogger(__name__)


class SenderRefused(Exception):
    """The sender of a spooled upload did not hold at import; the message says why
    (reviews.orchestration.intake.spool_senders, reviews.apiauth.tokens)."""


class SpoolFull(Exception):
    """The spool already holds SPOOL_MAX_BYTES: the upload is not kept."""


def spool_dir() -> Path:
    return Path(settings.SPOOL_DIR)


def spool_bytes() -> int:
    """The bytes the spool holds: every folder, being written, waiting or failed."""
    total = 0
    for folder, _, names in os.walk(spool_dir()):
        for name in names:
            try:
                total += os.stat(os.path.join(folder, name)).st_size
            except FileNotFoundError:  # imported (removed) while we counted
                pass
    return total


def spool_upload(
    sources: list[Source],
    *,
    channel: str,
    user_id: int | None,
    error: str,
    sender: dict[str, str] | None = None,
    dataset: str | None = None,
    workspace_id: int | None = None,
    as_of: datetime | None = None,
    rate_keys: list[str] | None = None,
    refused: list[str] | None = None,
    idempotency_key: str | None = None,
    idempotency_sha256: str | None = None,
    intake_key: str | None = None,
) -> str:
    """Write an upload that could not be stored to its own spool folder; its id.
    `channel` is "form" or "api"; `refused` the form's errors when the upload was
    refused before parsing (it is stored rejected with them). `sender` says how
    `user_id` was known when the database could not confirm it, to be checked at import
    (reviews.orchestration.intake.spool_senders); None when the user was checked at reception.
    Raises SpoolFull when keeping it would pass SPOOL_MAX_BYTES (checked without a lock:
    uploads kept at the same moment may pass it by their own sizes), and OSError (a full
    disk): either way the upload is not kept. Logs what became of it, with `error`.
    `idempotency_key` and `idempotency_sha256` (what the request was: its files, dataset
    and as-of) travel with an API upload: a retry finds it by them (find_keyed) and its
    import claims the key for the batch it stores (reviews.apiauth.idempotency).
    `intake_key` is the upload's one claim (Batch.intake_key): the import stores it only
    if no batch holds it already (one whose commit went through, unanswered)."""
    incoming = sum(source.size for source in sources)
    held = spool_bytes()
    if held + incoming > settings.SPOOL_MAX_BYTES:
        full = SpoolFull(
            f"the spool holds {held:,} bytes of uploads; {incoming:,} more would pass "
            f"SPOOL_MAX_BYTES ({settings.SPOOL_MAX_BYTES:,})"
        )
        logger.error("upload not kept: %s; %s", full, error)
        raise full
    received = datetime.now(UTC)
    spool_id = f"{received:%Y%m%dT%H%M%S}-{secrets.token_hex(6)}"
    root = spool_dir()
    temp = root / f"{_TEMP_PREFIX}{spool_id}"
    (temp / FILES).mkdir(parents=True)
    try:
        files = [_write_file(temp / FILES / str(i), source) for i, source in enumerate(sources)]
        meta = {
            "id": spool_id,
            "received_at": received.isoformat(),
            "channel": channel,
            "user_id": user_id,
            "sender": sender,
            "dataset": dataset,
            "workspace_id": workspace_id,  # checked at import: the user may upload there
            "as_of": as_of.isoformat() if as_of else None,
            "rate_keys": rate_keys,
            "idempotency_key": idempotency_key,
            "idempotency_sha256": idempotency_sha256,
            "intake_key": intake_key,
            "refused": refused or [],
            "error": error,
            "files": files,
        }
        _write_json(temp / META, meta)
        _fsync_dir(temp / FILES)
        _fsync_dir(temp)
        os.rename(temp, root / spool_id)
        _fsync_dir(root)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    logger.error("upload kept in the spool as %s: %s", spool_id, error)
    return spool_id


def _write_file(path: Path, source: Source) -> dict[str, Any]:
    size = 0
    with path.open("wb") as out:
        for chunk in source.chunks():
            out.write(chunk)
            size += len(chunk)
        out.flush()
        os.fsync(out.fileno())
    return {"name": source.name, "path": f"{FILES}/{path.name}", "size": size}


def _write_json(path: Path, data: dict[str, Any]) -> None:
    # ensure_ascii: a lone surrogate in a file name is written as its \\u escape and
    # read back as the same string.
    with path.open("w", encoding="ascii") as out:
        json.dump(data, out, indent=1)
        out.flush()
        os.fsync(out.fileno())


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def pending(*, include_failed: bool = False) -> list[Path]:
    """Complete spool folders, oldest first; without those whose import failed for a
    reason a retry would not fix, unless `include_failed`."""
    root = spool_dir()
    if not root.is_dir():
        return []
    folders = sorted(
        p for p in root.iterdir() if p.is_dir() and not p.name.startswith(_TEMP_PREFIX)
    )
    if include_failed:
        return folders
    return [p for p in folders if not _failed(p)]


def _failed(folder: Path) -> bool:
    return (folder / IMPORT_ERROR).exists()


def read_meta(folder: Path) -> dict[str, Any]:
    return json.loads((folder / META).read_text(encoding="ascii"))


def sources(folder: Path, meta: dict[str, Any]) -> list[Source]:
    """The spooled files as chunked sources, each checked against its recorded size."""
    found = []
    for entry in meta["files"]:
        path = folder / entry["path"]
        size = path.stat().st_size
        if size != entry["size"]:
            raise ValueError(f"{entry['path']}: {size:,} bytes, {entry['size']:,} were received")
        found.append(Source(name=entry["name"], size=size, chunks=lambda p=path: _read(p)))
    return found


def _read(path: Path, size: int = 1024 * 1024) -> Iterator[bytes]:
    with path.open("rb") as data:
        while chunk := data.read(size):
            yield chunk


def find_keyed(channel: str, user_id: int | None, key: str) -> dict[str, Any] | None:
    """The meta of the upload in the spool (waiting, or whose import failed) that
    `user_id` sent through `channel` with this idempotency key, or None."""
    for folder in pending(include_failed=True):
        try:
            meta = read_meta(folder)
        except (OSError, ValueError):  # imported (removed) since the listing, or damaged
            continue
        if (meta.get("channel"), meta.get("user_id"), meta.get("idempotency_key")) == (
            channel,
            user_id,
            key,
        ):
            return meta
    return None


def mark_failed(folder: Path, reason: str) -> None:
    """Keep the folder with why its import failed: automatic imports skip it
    (`manage.py import_spool --retry-failed` tries again)."""
    failure = {"error": reason, "failed_at": datetime.now(UTC).isoformat()}
    temp = folder / f"{_TEMP_PREFIX}{IMPORT_ERROR}"
    _write_json(temp, failure)
    os.replace(temp, folder / IMPORT_ERROR)


def import_error(folder: Path) -> str | None:
    """Why the folder's last import failed, or None."""
    try:
        return json.loads((folder / IMPORT_ERROR).read_text(encoding="ascii"))["error"]
    except FileNotFoundError:
        return None


def remove(folder: Path) -> None:
    shutil.rmtree(folder)


@contextmanager
def claimed(folder: Path) -> Iterator[bool]:
    """Hold the folder for one importer (the sweep and the command may run at once):
    yields False if another process holds it. The lock dies with its process."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except FileNotFoundError:  # imported meanwhile
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield folder.is_dir()  # not imported between the listing and the lock
    finally:
        os.close(fd)
