"""POST /batches: an upload (multipart files, or a JSON batch as the body), handed to
the intake (reviews.orchestration.intake.entry) exactly as the upload form hands it."""

from __future__ import annotations

import logging
import tempfile
from contextlib import ExitStack
from datetime import datetime
from pathlib import PurePosixPath
from typing import Annotated

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.http.multipartparser import MultiPartParserError
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils.http import parse_header_parameters
from ninja import Header, Query, Router, Status
from ninja.errors import HttpError
from pydantic import WithJsonSchema

from reviews.apiauth import idempotency
from reviews.apiauth.models import ApiToken
from reviews.apiauth.tokens import CachedToken
from reviews.engine.ingest import IngestError, UploadedFile
from reviews.models import Batch
from reviews.orchestration.intake import entry
from reviews.orchestration.intake.serve import ServeRefused
from reviews.orchestration.intake.spool_senders import TOKEN
from reviews.orchestration.intake.submit import UploadTooLarge, stored_name, unreachable_errors
from reviews.orchestration.store import spool
from reviews.orchestration.store.blob_store import Source
from reviews.web.api.auth import UPLOAD_OR_SPOOL, rate_identity
from reviews.web.api.bodies import DATASET_PARAM_SCHEMA, UPLOAD_BODY
from reviews.web.api.common import (
    MOMENT_HELP,
    Moment,
    accepted,
    parse_moment,
    query_as_sent,
    refuse_unstorable,
    too_many,
    utc,
)
from reviews.web.api.schemas import Problem, Rejected, Spooled, UploadAccepted, UploadStored
from reviews.web.api.spooling import DIFFERENT_UPLOAD, spooled, spooled_answer
from reviews.web.uploads import CHUNK_BYTES, as_sources, too_large_message
from reviews.web.views import split_errors

logger = logging.getLogger(__name__)

router = Router(tags=["batches"])

JSON_TYPES = ("application/json", "text/json")
MULTIPART = "multipart/form-data"
BODY_NAME = "body.json"  # a JSON body's stored name when the client gave it none

RESPONSES = {
    202: UploadAccepted | UploadStored,
    400: Rejected,
    401: Problem,
    403: Problem,
    409: Problem,
    413: Problem,
    415: Problem,
    422: Problem,
    429: Problem,
    503: Spooled,
}


@router.post(
    "/batches",
    auth=UPLOAD_OR_SPOOL,
    response=RESPONSES,
    # The body is read by hand (two content types, the bytes stored as received), so
    # the OpenAPI document describes it from reviews.web.api.bodies.
    openapi_extra={"requestBody": UPLOAD_BODY},
    url_name="batches",
)
def upload_batch(
    request: HttpRequest,
    response: HttpResponse,
    as_of: Annotated[
        Moment | None, Query(description=f"Date rules count from this time: {MOMENT_HELP}.")
    ] = None,
    # Documented, not enforced here: a name the pattern refuses is kept with the upload
    # and answered 400 with the batch, as the batch's own `dataset` key is.
    dataset: Annotated[str | None, Query(), WithJsonSchema(DATASET_PARAM_SCHEMA)] = None,
    filename: Annotated[
        str | None,
        Query(
            description="A JSON body's file name, as the batch is listed (else the "
            "Content-Disposition header's filename, else body.json); a longer one than "
            "500 characters is cut, keeping its extension.",
        ),
    ] = None,
    idempotency_key: Annotated[
        str | None,
        Header(
            alias="Idempotency-Key",
            min_length=1,
            max_length=255,
            description="A retry with the same key returns the first request's run.",
        ),
    ] = None,
):
    """Upload a batch for review. Answers 202 with the run to poll, or 400 with every
    structural error (record and field); the upload is kept either way. With the
    database down it is kept in the spool and reviewed when it is back: 503 with
    Retry-After (do not send it again, it would be reviewed twice, unless with the same
    Idempotency-Key: then it is answered with the same spool id, or the batch once stored)."""
    token = request.auth
    if is_big(request):  # streamed to storage, read by a worker: never held here
        return upload_big(request, response, token, as_of, dataset, idempotency_key, filename)
    files, fields = request_files(request, filename)
    as_of = utc(as_of) or form_time(fields.get("as_of"))
    dataset = given_dataset(request, dataset, fields)
    key = refuse_unstorable(idempotency_key, "Idempotency-Key")
    fingerprint = idempotency.request_sha256(files, dataset, as_of) if key else None
    return take(request, response, files, token, as_of, dataset, key, fingerprint)


def given_dataset(request: HttpRequest, dataset: str | None, fields: dict) -> str | None:
    """The dataset named beside the upload (query parameter, else multipart field), as
    sent: the intake checks it as the batch's own key, a bad name rejecting the batch
    (kept, 400), never altered (docs/input.md, The dataset)."""
    return query_as_sent(request, "dataset", dataset) or fields.get("dataset") or None


def take(
    request: HttpRequest,
    response: HttpResponse,
    files: list[UploadedFile] | list[Source],
    token: ApiToken | CachedToken,
    as_of: datetime | None,
    dataset: str | None,
    key: str | None,
    fingerprint: str | None,
):
    """Hand the upload to the intake (reviews.orchestration.intake.entry), its
    Idempotency-Key claimed first, and answer: 202 with the run (or with the stored batch
    a worker reads), 400 with the errors, or 503 with the spool id when the database
    could not take it."""
    upload = entry.Request(
        channel="api",
        user=token.user if isinstance(token, ApiToken) else None,
        user_id=token.user_id,
        sender=spooled_sender(token),
        workspace_id=token.workspace_id,
        named_workspace_id=token.workspace_id,
        as_of=as_of,
        dataset=dataset,
        rate_keys=rate_identity(token, request),
        idempotency_key=key,
        idempotency_sha256=fingerprint,
    )
    if isinstance(token, CachedToken):  # the database is down: the token is checked at import
        try:
            return spooled(response, entry.receive(files, upload, offline=token.error))
        except spool.SpoolFull:
            return spooled(response, None)
    record = None
    if key:
        # Before the claim: the import of a spooled upload claims its key, then removes it.
        if answer := spooled_answer(response, token, key, fingerprint):
            return answer
        record, first = idempotency.claim(token.user, key, fingerprint)
        if not first:
            return replay(request, response, record, fingerprint)
    try:
        taken = entry.receive(files, upload)
    except ServeRefused as error:
        _release(record)
        return Status(429, too_many(response, error))
    except UploadTooLarge as error:
        _release(record)
        return Status(413, {"detail": str(error)})
    except IngestError as error:  # nothing uploaded at all
        _release(record)
        return Status(
            400, {"detail": "no batch", "batch_id": None, "errors": errors_of(error.errors)}
        )
    except spool.SpoolFull:  # the database is down and the spool full: nothing kept
        _release_unreachable(record)
        return spooled(response, None)
    except BaseException:  # a crash: a retry with the key must not wait on it for a day
        _release(record)
        raise
    if taken.route == entry.Route.SPOOL:  # nothing stored: kept on disk
        _release_unreachable(record)
        return spooled(response, taken)
    if taken.route == entry.Route.WORKER:  # stored: never "try again", which stores it twice
        _finish_quietly(record, taken.batch)
        detail = taken.detail or READ_BY_A_WORKER
        return Status(202, stored(request, response, taken.batch.pk, detail))
    if record is not None:
        idempotency.finish(record, taken.batch, taken.run)
    if not taken.accepted:
        return Status(400, rejected(taken.batch.pk, taken.errors))
    return Status(202, accepted(request, response, taken.run))


def spooled_sender(token: ApiToken | CachedToken) -> dict[str, str] | None:
    """How a token not checked in the database is kept in the spool: by its sha256, to
    be checked at import (reviews.orchestration.intake.spool_senders)."""
    if isinstance(token, ApiToken):
        return None
    return {"via": TOKEN, "token_sha256": token.digest}


def request_files(
    request: HttpRequest, filename: str | None = None
) -> tuple[list[UploadedFile], dict[str, str]]:
    """The uploaded files and the multipart form's other fields."""
    content_type = request.content_type or ""
    try:
        if content_type == MULTIPART:
            files = [
                UploadedFile(name=f.name, data=f.read()) for f in request.FILES.getlist("files")
            ]
            too_large = too_large_message(request)  # cut off while it arrived
            if too_large:
                raise HttpError(413, too_large)
            if not files:
                raise HttpError(422, "multipart upload without a `files` part")
            return files, {key: request.POST.get(key, "") for key in ("as_of", "dataset")}
        if content_type in JSON_TYPES:
            return [UploadedFile(name=body_name(request, filename), data=request.body)], {}
    except RequestDataTooBig:
        raise HttpError(413, "the request body is larger than MAX_UPLOAD_BYTES") from None
    except MultiPartParserError as error:
        raise HttpError(422, f"unreadable multipart body: {error}") from None
    raise HttpError(415, f"send {MULTIPART} (files) or application/json (a JSON batch)")


def body_name(request: HttpRequest, filename: str | None) -> str:
    """The name the client gave a JSON body: `?filename=`, else the Content-Disposition
    header's `filename` (RFC 6266, `filename*` too), else body.json. Only its last path
    part; always read as JSON (`.json` is added to another extension)."""
    given = filename
    header = request.headers.get("Content-Disposition", "")
    if not given and header:
        given = parse_header_parameters(header)[1].get("filename")
    name = PurePosixPath((given or "").replace("\\", "/")).name.strip()
    if not name:
        return BODY_NAME
    # Cut as every stored name is (docs/input.md: 500 characters, keeping the extension).
    return stored_name(name if name.lower().endswith(".json") else f"{name}.json")


def form_time(value: str | None) -> datetime | None:
    """`as_of` from a multipart field, read like the query parameter."""
    if not value:
        return None
    try:
        parsed = parse_moment(value)
    except ValueError:
        raise HttpError(422, f"as_of is not {MOMENT_HELP}: {value[:100]!r}") from None
    return utc(parsed)


def errors_of(errors: list[str]) -> list[dict[str, str]]:
    return [{"location": loc, "message": msg} for loc, msg in split_errors(errors)]


def rejected(batch_id: int, errors: list[str]) -> dict:
    return {
        "detail": f"batch {batch_id} rejected: {len(errors)} structural "
        f"problem{pluralize(len(errors))}; it is kept",
        "batch_id": batch_id,
        "errors": errors_of(errors),
    }


def replay(request: HttpRequest, response: HttpResponse, record, fingerprint: str):
    """The answer of the first request that used this key."""
    if record.batch is not None and record.batch.workspace_id != request.auth.workspace_id:
        # The key was used by a token of another workspace: its run is not this one's.
        return Status(422, {"detail": "this Idempotency-Key was used in another workspace"})
    if record.request_sha256 != fingerprint:
        return Status(422, {"detail": DIFFERENT_UPLOAD})
    if record.batch is None:
        return Status(
            409, {"detail": "the first request with this Idempotency-Key is still running"}
        )
    response["Idempotent-Replayed"] = "true"
    run = record.run or record.batch.runs.order_by("pk").first()
    if run is not None:
        return Status(202, accepted(request, response, run))
    if record.batch.status == Batch.Status.REJECTED:
        return Status(400, rejected(record.batch.pk, record.batch.errors))
    return Status(202, stored(request, response, record.batch.pk, READ_BY_A_WORKER))


def _release(record) -> None:
    if record is not None:
        idempotency.release(record)


def _release_unreachable(record) -> None:
    try:
        _release(record)
    except Exception:  # the database is down: the key stays claimed until its TTL
        logger.warning("could not release Idempotency-Key %s", record.key, exc_info=True)


READ_BY_A_WORKER = "stored; a worker reads it and starts its review (follow the batch page)"


def stored(request: HttpRequest, response: HttpResponse, batch_id: int, detail: str) -> dict:
    """The 202 body of an upload stored and read later by a worker."""
    page = request.build_absolute_uri(reverse("reviews:batch", kwargs={"batch_id": batch_id}))
    response["Location"] = page
    return {
        "batch_id": batch_id,
        "run_id": None,
        "status": Batch.Status.RECEIVED,
        "detail": detail,
        "urls": {"dashboard": page},
    }


def _finish_quietly(record, batch) -> None:
    """Tie the key to the stored batch, if the database lets us now: a retry with the
    key is then answered with it (replay)."""
    if record is None:
        return
    record.batch = batch
    try:
        record.save(update_fields=["batch"])
    except unreachable_errors():
        logger.warning("Idempotency-Key %s: not tied to batch %s yet", record.key, batch.pk)


def is_big(request: HttpRequest) -> bool:
    """An upload over PARSE_IN_WEB_MAX_BYTES: stored as it streams in, read by a worker."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return False
    return length > settings.PARSE_IN_WEB_MAX_BYTES and length <= settings.MAX_UPLOAD_BYTES


def upload_big(request, response, token, as_of, dataset, idempotency_key, filename=None):
    """A big upload: its files (multipart, spooled to disk by Django as they arrive) or
    its body (copied to a temporary file in chunks) handed to the intake without being
    held in memory; a worker reads it, as one from the upload form."""
    with ExitStack() as stack:
        sources, fields = big_sources(request, stack, filename)
        as_of = utc(as_of) or form_time(fields.get("as_of"))
        dataset = given_dataset(request, dataset, fields)
        key = refuse_unstorable(idempotency_key, "Idempotency-Key")
        fingerprint = idempotency.sources_sha256(sources, dataset, as_of) if key else None
        return take(request, response, sources, token, as_of, dataset, key, fingerprint)


def big_sources(
    request: HttpRequest, stack: ExitStack, filename: str | None = None
) -> tuple[list[Source], dict[str, str]]:
    content_type = request.content_type or ""
    if content_type == MULTIPART:
        try:
            received = request.FILES.getlist("files")
        except MultiPartParserError as error:
            raise HttpError(422, f"unreadable multipart body: {error}") from None
        too_large = too_large_message(request)
        if too_large:
            raise HttpError(413, too_large)
        if not received:
            raise HttpError(422, "multipart upload without a `files` part")
        fields = {key: request.POST.get(key, "") for key in ("as_of", "dataset")}
        return as_sources(received), fields
    if content_type in JSON_TYPES:
        body = stack.enter_context(tempfile.TemporaryFile())
        size = 0
        while chunk := request.read(CHUNK_BYTES):
            size += len(chunk)
            if size > settings.MAX_UPLOAD_BYTES:
                raise HttpError(413, "the request body is larger than MAX_UPLOAD_BYTES")
            body.write(chunk)
        name = body_name(request, filename)
        return [Source(name=name, size=size, chunks=lambda: _read_back(body))], {}
    raise HttpError(415, f"send {MULTIPART} (files) or application/json (a JSON batch)")


def _read_back(file):
    file.seek(0)
    while chunk := file.read(CHUNK_BYTES):
        yield chunk
