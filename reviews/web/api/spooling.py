"""API uploads the database could not take: kept in the spool (reviews.orchestration.store.spool)
and answered 503 with the spool id, and a retry with the same Idempotency-Key answered
with that same spool id while the upload waits there, instead of being kept twice."""

from __future__ import annotations

from datetime import datetime

from django.http import HttpRequest, HttpResponse
from ninja import Status

from reviews.apiauth import idempotency
from reviews.apiauth.models import ApiToken
from reviews.apiauth.tokens import CachedToken
from reviews.engine.ingest import UploadedFile
from reviews.orchestration.intake.spool_senders import TOKEN
from reviews.orchestration.intake.submit import as_source
from reviews.orchestration.store import spool
from reviews.orchestration.store.blob_store import Source
from reviews.web.api.auth import rate_identity
from reviews.web.unavailable import retry_after
from reviews.web.uploads import NOT_KEPT, SPOOLED

DIFFERENT_UPLOAD = "this Idempotency-Key was used for a different upload"


def keep(
    request: HttpRequest,
    response: HttpResponse,
    files: list[UploadedFile] | list[Source],
    token: ApiToken | CachedToken,
    error: str,
    *,
    dataset: str | None,
    as_of: datetime | None,
    key: str | None,
    fingerprint: str | None = None,
):
    """Keep an upload the database could not take in the spool: 503 with its spool id. A
    token not checked in the database is kept by its sha256, to be checked at import. With
    a key, the request's hash (`fingerprint`, else computed here) is kept beside it."""
    checked = isinstance(token, ApiToken)
    sources = [as_source(f) for f in files]
    if key and fingerprint is None:
        fingerprint = idempotency.sources_sha256(sources, dataset, as_of)
    if key and (answer := spooled_answer(response, token, key, fingerprint)):
        return answer
    response["Retry-After"] = str(retry_after())
    try:
        spool_id = spool.spool_upload(
            sources,
            channel="api",
            user_id=token.user_id,
            sender=None if checked else {"via": TOKEN, "token_sha256": token.digest},
            error=error,
            dataset=dataset,
            workspace_id=token.workspace_id,
            as_of=as_of,
            rate_keys=rate_identity(token, request),
            idempotency_key=key,
            idempotency_sha256=fingerprint if key else None,
        )
    except spool.SpoolFull:
        return Status(503, {"detail": NOT_KEPT})
    return Status(503, {"detail": SPOOLED, "spool_id": spool_id})


def spooled_answer(
    response: HttpResponse, token: ApiToken | CachedToken, key: str, fingerprint: str
):
    """The first request's answer to a retry of an upload that waits in the spool (the
    same spool id), 422 if the key came with another upload; None if none waits."""
    found = idempotency.spooled(token.user_id, key, fingerprint)
    if found is None:
        return None
    spool_id, same = found
    if not same:
        return Status(422, {"detail": DIFFERENT_UPLOAD})
    response["Retry-After"] = str(retry_after())
    response["Idempotent-Replayed"] = "true"
    return Status(503, {"detail": SPOOLED, "spool_id": spool_id})
