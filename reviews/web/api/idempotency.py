"""Idempotency keys: a retried upload with the same `Idempotency-Key` gets the first
request's answer instead of making a second batch. Keys are per user and remembered
for KEY_TTL; the first request claims its key with a unique row before it does any
work, so two concurrent retries cannot both upload."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from reviews.engine.ingest import UploadedFile
from reviews.orchestration.blob_store import Source
from reviews.orchestration.submit import Submission, stored_sha256
from reviews.web.api.models import IdempotencyKey

KEY_TTL = timedelta(hours=24)


def request_sha256(files: list[UploadedFile], dataset: str | None, as_of: datetime | None) -> str:
    """What makes two uploads the same request: their bytes, dataset and as-of."""
    parts = [stored_sha256(files), dataset or "", as_of.isoformat() if as_of else ""]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def sources_sha256(sources: list[Source], dataset: str | None, as_of: datetime | None) -> str:
    """request_sha256 of files read in chunks (a big upload, never held in memory)."""
    digests = []
    for source in sources:
        digest = hashlib.sha256()
        for chunk in source.chunks():
            digest.update(chunk)
        digests.append(digest.hexdigest())
    combined = (
        digests[0]
        if len(digests) == 1
        else hashlib.sha256("".join(sorted(digests)).encode()).hexdigest()
    )
    parts = [combined, dataset or "", as_of.isoformat() if as_of else ""]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


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


def finish(record: IdempotencyKey, submission: Submission) -> None:
    record.batch = submission.batch
    record.run = submission.run
    record.save(update_fields=["batch", "run"])


def release(record: IdempotencyKey) -> None:
    """The request was refused before it made anything (rate limit, size): a retry with
    the same key may try again."""
    record.delete()
