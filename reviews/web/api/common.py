"""Helpers shared by the API's endpoints: URLs of a run, answers of a served upload."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated
from urllib.parse import parse_qsl

from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from ninja.errors import HttpError
from pydantic import PlainValidator, WithJsonSchema

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


def query_as_sent(request: HttpRequest, name: str, value: str | None) -> str | None:
    """Query parameter `name` (read as `value`) as its bytes were sent. Django decodes
    bytes that are not UTF-8 as U+FFFD, an altered text; here they are lone surrogates
    ("\udced"), which a check that refuses by name (dataset_name_problem) refuses."""
    if value is None or "\N{REPLACEMENT CHARACTER}" not in value:
        return value
    # The WSGI environ holds the query's bytes as Latin-1 text (PEP 3333), as Django reads it.
    query = request.META.get("QUERY_STRING", "").encode("iso-8859-1", "replace")
    pairs = parse_qsl(query.decode("utf-8", "surrogateescape"), True, errors="surrogateescape")
    named = [text for key, text in pairs if key == name]
    return named[-1] if named else value  # the last, as request.GET.get reads it


# A time given as a query parameter or form field: an ISO 8601 date-time or date, and
# nothing else. Not pydantic's datetime, which also reads a number as a Unix time
# (`since=0.5` was 1970), which the schema's `format: date-time` does not allow.
_MOMENT = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
    r"(?:[Tt ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?(?:[Zz]|[+-][0-9]{2}:?[0-9]{2})?)?",
    re.ASCII,
)
MOMENT_HELP = "an ISO 8601 date-time (without a zone: UTC) or date (its midnight UTC)"
MOMENT_SCHEMA = {
    "anyOf": [{"type": "string", "format": "date-time"}, {"type": "string", "format": "date"}],
    "description": MOMENT_HELP,
}


def parse_moment(value: object) -> datetime:
    """An ISO 8601 date-time (2026-08-01T09:00:00Z, naive, with an offset, `t`/`z` in
    either case) or date, naive or aware as written; ValueError for anything else."""
    if value.__class__ is not str or not _MOMENT.fullmatch(value.strip()):
        raise ValueError(f"not {MOMENT_HELP}, such as 2026-08-01T09:00:00Z")
    return datetime.fromisoformat(value.strip().upper())  # its own ValueError: 2026-02-30


Moment = Annotated[datetime, PlainValidator(parse_moment), WithJsonSchema(MOMENT_SCHEMA)]


# A JSON body's whole number as JSON Schema's `integer` reads it: 3 or 3.0, never `true`
# or "3" (which pydantic would take as 1 and 3), and one a Postgres integer holds.
INT_MAX = 2**31 - 1


def json_int(value: object) -> int:
    if value.__class__ is float and value.is_integer():
        value = int(value)
    if value.__class__ is not int or not 0 <= value <= INT_MAX:
        raise ValueError(f"not a whole number from 0 to {INT_MAX}")
    return value


JsonInt = Annotated[
    int,
    PlainValidator(json_int),
    WithJsonSchema({"type": "integer", "minimum": 0, "maximum": INT_MAX}),
]


def utc(value: datetime | None) -> datetime | None:
    """A naive time is UTC (as on the upload form); an aware one is converted. A time
    on the first or last day Python can hold whose offset takes it past that range is
    its end (the schema's date-times run from year 1 to 9999 with any offset)."""
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        return (datetime.min if value.year == 1 else datetime.max).replace(tzinfo=UTC)
