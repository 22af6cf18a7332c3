"""API uploads the database could not take, kept in the spool by the intake
(reviews.orchestration.intake.entry): answered 503 with the spool id, and a retry with
the same Idempotency-Key answered with that same spool id while the upload waits there,
instead of being kept twice."""

from __future__ import annotations

from django.http import HttpResponse
from ninja import Status

from reviews.apiauth import idempotency
from reviews.apiauth.models import ApiToken
from reviews.apiauth.tokens import CachedToken
from reviews.orchestration.intake.entry import Received
from reviews.web.unavailable import retry_after
from reviews.web.uploads import NOT_KEPT, SPOOLED

DIFFERENT_UPLOAD = "this Idempotency-Key was used for a different upload"


def spooled(response: HttpResponse, taken: Received | None):
    """The answer to an upload the intake kept in the spool (`taken`), or could not keep
    (None: the spool is full): 503 with Retry-After; 422 if its key waits there with
    another upload."""
    if taken is not None and taken.different:
        return Status(422, {"detail": DIFFERENT_UPLOAD})
    response["Retry-After"] = str(retry_after())
    if taken is None:
        return Status(503, {"detail": NOT_KEPT})
    if taken.replayed:
        response["Idempotent-Replayed"] = "true"
    return Status(503, {"detail": SPOOLED, "spool_id": taken.spool_id})


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
