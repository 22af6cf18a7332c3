"""Helpers shared by the API's endpoints: URLs of a run, answers of a served upload."""

from __future__ import annotations

from datetime import UTC, datetime

from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from ninja.errors import HttpError

from reviews.engine.storable import is_storable
from reviews.models import ReviewRun
from reviews.orchestration.intake.serve import ServeRefused

# Postgres ids are bigints: a larger path id is simply not found (not a database error).
MAX_ID = 2**63 - 1


def run_urls(request: HttpRequest, run_id: int) -> dict[str, str]:
    def absolute(name: str, **kwargs: int) -> str:
        return request.build_absolute_uri(reverse(name, kwargs=kwargs))

    return {
        "api": absolute("api:run", run_id=run_id),
        "dashboard_json": absolute("reviews:run_json", run_id=run_id),
        "dashboard": absolute("reviews:run", run_id=run_id),
    }


def accepted(request: HttpRequest, response: HttpResponse, run: ReviewRun) -> dict:
    """The 202 body of a served upload or re-run; Location points at the run."""
    urls = run_urls(request, run.pk)
    response["Location"] = urls["api"]
    return {
        "batch_id": run.batch_id,
        "run_id": run.pk,
        "status": run.status,
        "mode": run.mode,
        "urls": urls,
    }


def too_many(response: HttpResponse, error: ServeRefused) -> dict:
    response["Retry-After"] = str(error.retry_after)
    return {"detail": f"{error.reason}; the upload is kept, retry after {error.retry_after} s"}


def refuse_unstorable(value: str | None, name: str) -> str | None:
    """Text from a query or form field, refused (422) if it holds a NUL or a lone
    surrogate: a name to look up is not data to keep, so it is not escaped
    (reviews.engine.storable) but sent back."""
    if value is not None and not is_storable(value):
        raise HttpError(422, f"{name} must not contain NUL bytes or lone surrogates")
    return value


def utc(value: datetime | None, name: str) -> datetime | None:
    """A naive time is UTC (as on the upload form); an aware one is converted."""
    if value is None:
        return None
    try:
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except (OverflowError, ValueError):
        raise HttpError(422, f"{name} is out of range") from None
