"""The one way in. Whichever door an upload comes in by (the upload page, the API, the
spool import, the sweep), it is stored with what it asked for beside its files (the
batch row's requested_as_of, requested_dataset and rate_keys: submit.store_upload), and
then, decided here:

- parsed here (no bigger than PARSE_IN_WEB_MAX_BYTES): answered with its run, or with
  its errors;
- handed to a worker (bigger, or the database went away after the store): the one accept
  message, the batch id only (store.unread.accept_message); the worker reads the request
  from the row (submit.accept_stored_upload), as the sweep's resend of it does;
- kept in the spool (the database cannot take it): reviews.orchestration.store.spool,
  imported once it is back (spool_import), through the same store and read.

Each upload gets one claim, its intake key: on its batch row when stored, in its spool
folder when kept there. When the database goes away at the store's commit, the commit
may have gone through unanswered; the upload is kept in the spool all the same, and the
import stores it only if no batch holds its key. Whatever the moment, an upload answered
"kept" is stored once.

The doors only translate: a form or an API request into a Request, and the Received
into a page or an answer."""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.db import transaction
from kombu.exceptions import OperationalError as BrokerUnavailable

from reviews.apiauth import idempotency
from reviews.engine.ingest import UploadedFile
from reviews.models import Batch, ReviewRun
from reviews.orchestration.intake.submit import (
    DatabaseUnavailable,
    StoredNotRead,
    as_source,
    store_upload,
    submit,
)
from reviews.orchestration.intake.tasks import accept_upload
from reviews.orchestration.store import spool
from reviews.orchestration.store.blob_store import Source
from reviews.orchestration.store.unread import accept_message

logger = logging.getLogger(__name__)


class Route(StrEnum):
    HERE = "here"  # read in this process (or refused before it): a run, or errors
    WORKER = "worker"  # stored; a worker reads it
    SPOOL = "spool"  # the database could not take it: kept on disk until it is back


@dataclass(frozen=True, slots=True)
class Request:
    """What came with an upload's files, whichever door it came in by."""

    channel: str  # "form" or "api": how the spool finds a keyed retry (spool.find_keyed)
    user: Any = None  # the sender, checked; None when it could not be loaded
    user_id: int | None = None  # the sender's id, when `user` could not be loaded
    sender: dict[str, str] | None = None  # how user_id was known without the database
    workspace_id: int | None = None  # where it is stored (None: the default workspace)
    # The workspace the request itself named (None: none): what the spool keeps, for the
    # import to check, where the door (with the database) chose workspace_id for it.
    named_workspace_id: int | None = None
    as_of: datetime | None = None
    dataset: str | None = None
    rate_keys: list[str] | None = None
    refused: tuple[str, ...] = ()  # why it was refused before parsing (the form's errors)
    idempotency_key: str | None = None
    idempotency_sha256: str | None = None  # what the keyed request was

    @property
    def sender_id(self) -> int | None:
        return self.user.pk if self.user is not None else self.user_id


@dataclass(slots=True)
class Received:
    route: Route
    batch: Batch | None = None  # None: kept in the spool
    run: ReviewRun | None = None
    errors: list[str] = field(default_factory=list)  # rejected (HERE, no run)
    detail: str = ""  # WORKER: why a worker reads it, when the database went away
    spool_id: str | None = None
    replayed: bool = False  # SPOOL: the same keyed upload waited there already
    different: bool = False  # SPOOL: ... with other files, dataset or as-of under its key

    @property
    def accepted(self) -> bool:
        return self.run is not None


def by_worker(size: int) -> bool:
    """Whether an upload of `size` bytes is read by a worker: the web process never
    holds a big batch parsed (a million records are over 1 GB)."""
    return size > settings.PARSE_IN_WEB_MAX_BYTES


def receive(
    files: list[UploadedFile] | list[Source], request: Request, *, offline: str | None = None
) -> Received:
    """Take an upload in: store it and read it here, or hand it to a worker, or keep it in
    the spool when the database cannot take it (`offline`: why the database was known to
    be away before it was asked). Raises UploadTooLarge, IngestError (no file),
    ServeRefused (the batch is kept) and spool.SpoolFull (nothing is kept)."""
    # The upload's one claim: on its batch row if it is stored, in its spool folder if it
    # is kept there; the import stores it only if no batch holds it (submit.store_upload).
    claim = secrets.token_hex(16)
    if offline is not None:
        return _spool(files, request, offline, claim)
    sources = [as_source(f) for f in files]
    stored = {
        "intake_key": claim,
        "created_by": request.user,
        "workspace": request.workspace_id,
        "as_of": request.as_of,
        "dataset": request.dataset,
        "rate_keys": request.rate_keys,
    }
    try:
        if request.refused or by_worker(sum(s.size for s in sources)):
            batch = store_upload(sources, refused=list(request.refused), **stored)
            if batch.status == Batch.Status.REJECTED:
                return Received(Route.HERE, batch, errors=batch.errors)
            hand_over(batch)
            return Received(Route.WORKER, batch)
        submission = submit(_in_memory(files), **stored)
    except DatabaseUnavailable as error:  # not stored (or unanswered): keep it on disk
        return _spool(files, request, str(error), claim)
    except StoredNotRead as error:  # stored; a worker reads it once the database is back
        return Received(Route.WORKER, error.batch, detail=str(error))
    return Received(Route.HERE, submission.batch, submission.run, submission.errors)


def hand_over(batch: Batch) -> None:
    """Send the accept message once the batch is committed (a worker never looks for a
    batch it cannot see). The broker may be down: the sweep sends it again."""

    def send() -> None:
        try:
            accept_upload.delay(**accept_message(batch.pk))
        except BrokerUnavailable as error:  # the sweep sends it again (sweep.unread_batches)
            logger.warning("batch %s: not sent to a worker (%r); the sweep will", batch.pk, error)

    transaction.on_commit(send)


def _in_memory(files: list[UploadedFile] | list[Source]) -> list[UploadedFile]:
    """The files as bytes, to parse here (small: at most PARSE_IN_WEB_MAX_BYTES)."""
    return [
        f if isinstance(f, UploadedFile) else UploadedFile(name=f.name, data=b"".join(f.chunks()))
        for f in files
    ]


def _spool(
    files: list[UploadedFile] | list[Source], request: Request, error: str, claim: str
) -> Received:
    """Keep the upload in the spool under its claim, unless the same keyed upload
    already waits there: one upload is kept once."""
    key = request.idempotency_key
    if key:
        waiting = idempotency.spooled(request.sender_id, key, request.idempotency_sha256 or "")
        if waiting is not None:
            spool_id, same = waiting
            return Received(Route.SPOOL, spool_id=spool_id, replayed=True, different=not same)
    spool_id = spool.spool_upload(
        [as_source(f) for f in files],
        channel=request.channel,
        user_id=request.sender_id,
        sender=request.sender,
        error=error,
        dataset=request.dataset,
        workspace_id=request.named_workspace_id,
        as_of=request.as_of,
        rate_keys=request.rate_keys,
        refused=list(request.refused) or None,
        idempotency_key=key,
        idempotency_sha256=request.idempotency_sha256 if key else None,
        intake_key=claim,
    )
    return Received(Route.SPOOL, spool_id=spool_id)
