"""Idempotency keys: a retried upload with the same `Idempotency-Key` gets the first
request's answer instead of making a second batch. Keys are per user and remembered
for KEY_TTL; the first request claims its key with a unique row before it does any
work, so two concurrent retries cannot both upload.

An upload kept in the spool while the database was down (reviews.orchestration.store.spool)
carries its key and request_sha256: a retry finds it there (`spooled`) and gets its
spool id, and its import claims the key for the batch it stores (`store_keyed`), so a
retry after that gets the batch. Never a second batch either way."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from reviews.apiauth.models import IdempotencyKey
from reviews.engine.ingest import UploadedFile
from reviews.models import Batch, ReviewRun
from reviews.orchestration.store import spool
from reviews.orchestration.store.blob_store import Source, combined_sha256, files_sha256

logger = logging.getLogger(__name__)

KEY_TTL = timedelta(hours=24)


def request_sha256(files: list[UploadedFile], dataset: str | None, as_of: datetime | None) -> str:
    """What makes two uploads the same request: their bytes, dataset and as-of."""
    digests = [hashlib.sha256(f.data).hexdigest() for f in files]
    return _request_sha256(combined_sha256(digests), dataset, as_of)


def sources_sha256(sources: list[Source], dataset: str | None, as_of: datetime | None) -> str:
    """request_sha256 of files read in chunks (a big upload, never held in memory)."""
    return _request_sha256(files_sha256(sources), dataset, as_of)


def _request_sha256(files: str, dataset: str | None, as_of: datetime | None) -> str:
    parts = [files, dataset or "", as_of.isoformat() if as_of else ""]
    # surrogatepass: a dataset name sent as bytes that are not UTF-8 (rejected later).
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def claim(user: AbstractBaseUser, key: str, fingerprint: str) -> tuple[IdempotencyKey, bool]:
    """(the key's record, True if this request is the first to use it)."""
    IdempotencyKey.objects.filter(
        user=user, key=key, created_at__lt=timezone.now() - KEY_TTL
    ).delete()
    try:
        with transaction.atomic():
            record = IdempotencyKey.objects.create(user=user, key=key, request_sha256=fingerprint)
        return record, True
    except IntegrityError:
        return IdempotencyKey.objects.select_related("batch", "run").get(user=user, key=key), False


def finish(record: IdempotencyKey, batch: Batch, run: ReviewRun | None) -> None:
    record.batch = batch
    record.run = run
    record.save(update_fields=["batch", "run"])


def release(record: IdempotencyKey) -> None:
    """The request was refused before it made anything (rate limit, size): a retry with
    the same key may try again."""
    record.delete()


def spooled(user_id: int | None, key: str, fingerprint: str) -> tuple[str, bool] | None:
    """The upload this user sent with `key` that waits in the spool: (its spool id, True
    if it is the same request), or None."""
    meta = spool.find_keyed("api", user_id, key)
    if meta is None:
        return None
    # Kept before the spool recorded a request's hash: taken as the same, never stored twice.
    return meta["id"], meta.get("idempotency_sha256") in (None, fingerprint)


def store_keyed(
    user: AbstractBaseUser,
    meta: dict[str, Any],
    files: list[Source],
    store: Callable[[], Batch],
) -> tuple[Batch, bool]:
    """Store a spooled upload sent with an Idempotency-Key, in the import's transaction
    (reviews.orchestration.intake.spool_import.store_one): the key is claimed for its batch, or
    already holds it (the import ran before: nothing is stored again). A key that holds
    another upload does not stop this one from being kept."""
    key = meta["idempotency_key"]
    fingerprint = meta.get("idempotency_sha256") or sources_sha256(
        files,
        meta.get("dataset"),
        datetime.fromisoformat(meta["as_of"]) if meta.get("as_of") else None,
    )
    record, first = claim(user, key, fingerprint)
    if not first and record.request_sha256 != fingerprint:
        logger.warning("spool %s: Idempotency-Key %s holds another upload", meta["id"], key)
        return store(), True
    if record.batch is not None:
        return record.batch, False
    record.batch = store()
    record.save(update_fields=["batch"])
    return record.batch, True
