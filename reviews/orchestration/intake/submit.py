"""From uploaded files to a served review: store first (with what the upload asked for),
then parse, then serve it (reviews.orchestration.intake.serve).

The steps every door shares: the web's through reviews.orchestration.intake.entry, the
CLI's and the tests' through submit(), a worker's and the spool import's through
accept_stored_upload(). Nothing is lost: the bytes are committed before parsing starts,
and a refused request keeps its accepted batch."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from datetime import datetime

from celery import current_app
from django.conf import settings
from django.db import IntegrityError, InterfaceError, OperationalError, connection, transaction

from reviews.engine import batch as plain
from reviews.engine.coverage import missing_columns
from reviews.engine.ingest import IngestError, UploadedFile
from reviews.engine.storable import storable
from reviews.models import Batch, ReviewRun
from reviews.orchestration.dataset.names import dataset_name, dataset_named
from reviews.orchestration.dataset.pipelines import learn_pipelines
from reviews.orchestration.intake.serve import ServeRefused, dispatch_review, serve
from reviews.orchestration.serving import decide as serving
from reviews.orchestration.store.blob_store import Source, combined_sha256, copy_into
from reviews.orchestration.store.parsed import keep_parsed, parse, stored_files
from reviews.orchestration.store.unread import ACCEPT_UPLOAD, accept_message, unread

logger = logging.getLogger(__name__)


class UploadTooLarge(Exception):
    pass


class DatabaseUnavailable(Exception):
    """The upload could not be stored: the database is unreachable. Nothing of it is in
    the database; the web keeps it in the spool (reviews.orchestration.store.spool)."""

    @classmethod
    def of(cls, error: Exception) -> DatabaseUnavailable:
        """From the driver's error (one of unreachable_errors()), its text made safe."""
        return cls(f"{type(error).__name__}: {storable(str(error))}")


class StoredNotRead(Exception):
    """The upload is stored (`batch`), but the database went away before it was read:
    a worker reads and serves it once the database is back (intake.tasks.accept_upload,
    retried; the sweep sends it again if that message is lost). Answer with the batch,
    never "try again": a second upload would be reviewed twice."""

    def __init__(self, batch: Batch, error: Exception) -> None:
        super().__init__(f"batch {batch.pk} stored; reading it waits for the database ({error})")
        self.batch = batch


@dataclass(slots=True)
class Submission:
    batch: Batch
    run: ReviewRun | None = None
    errors: list[str] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return self.run is not None


def submit(
    files: list[UploadedFile],
    *,
    created_by=None,
    as_of: datetime | None = None,
    dispatch: bool = True,
    rate_keys: list[str] | None = None,
    no_cache: bool = False,
    dataset: str | None = None,
    workspace=None,
    intake_key: str | None = None,
) -> Submission:
    """Store, parse here and (if valid) serve a review: a finished run that reuses
    another run's review, or a queued one. `dispatch=False` leaves a queued run for the
    caller to execute (the CLI runs it in-process). `rate_keys` are None where no rate
    limit applies (the CLI). `dataset` (the form's field, the CLI's --dataset) wins over
    the batch's own "dataset" key. `workspace` is where the batch (and its dataset)
    belong: every request names it; None is the default workspace (tests, a one-team
    CLI). `intake_key`: the upload's one claim (store_upload). Raises ServeRefused."""
    batch = store_upload(
        files,
        created_by=created_by,
        workspace=workspace,
        as_of=as_of,
        dataset=dataset,
        rate_keys=rate_keys,
        intake_key=intake_key,
    )
    if batch.status == Batch.Status.REJECTED:  # refused before parsing: its dataset name
        return Submission(batch=batch, errors=batch.errors)
    try:
        return review_stored(batch, files=files, dispatch=dispatch, no_cache=no_cache)
    except unreachable_errors() as error:  # stored, then the database went away
        read_later(batch)
        raise StoredNotRead(batch, error) from error


def read_later(batch: Batch) -> None:
    """Send a stored batch to a worker to read and serve, at once and by name (the task's
    module imports this one). The broker may be down too: the sweep finds it unread."""
    try:
        current_app.send_task(ACCEPT_UPLOAD, kwargs=accept_message(batch.pk))
    except Exception as error:  # the sweep sends it again (sweep.unread_batches)
        logger.warning("batch %s: not sent to a worker (%r); the sweep will", batch.pk, error)


def review_stored(
    batch: Batch,
    *,
    files: list[UploadedFile] | None = None,
    dispatch: bool = True,
    no_cache: bool = False,
    as_of: datetime | None = None,
    dataset: str | None = None,
) -> Submission:
    """submit() after the store: parse the stored batch (or `files`, its bytes still in
    memory) as its upload asked (the request on its row) and serve it. `as_of` and
    `dataset` are for a caller that names them only after the store (a pull): recorded on
    the row first. A worker calls this for an upload too big to parse in the web process
    (accept_stored_upload). Raises ServeRefused."""
    if as_of is not None or dataset is not None:
        try:
            name_request(batch, as_of=as_of, dataset=dataset)
        except IngestError as error:
            reject(batch, error.errors)
            return Submission(batch=batch, errors=error.errors)
    rate_keys = batch.rate_keys  # accept() clears them on the row: the request is answered
    try:
        parsed = accept(batch, files=files)
    except IngestError as error:
        return Submission(batch=batch, errors=error.errors)
    run = serve(batch, parsed, created_by=batch.created_by, rate_keys=rate_keys, no_cache=no_cache)
    if run.status == ReviewRun.Status.QUEUED:
        if dispatch:
            dispatch_review(run)
        else:  # the caller reviews it in this process: spare its tasks a second parse
            keep_parsed(batch.pk, parsed, batch.content_key)
    return Submission(batch=batch, run=run)


def store_upload(
    files: list[UploadedFile | Source],
    *,
    created_by=None,
    workspace=None,
    as_of: datetime | None = None,
    dataset: str | None = None,
    rate_keys: list[str] | None = None,
    refused: list[str] | None = None,
    received_at: datetime | None = None,
    intake_key: str | None = None,
) -> Batch:
    """Keep the upload byte for byte, before anything reads it, with what it asked for:
    its as-of time, dataset and rate-limit keys, read with it by whoever reads it (this
    process, a worker, the sweep's resend). `files` are in memory (UploadedFile) or read
    in chunks (Source: a big upload spooled to disk). A request refused before parsing
    (`refused`: the form's errors; or a dataset name that cannot be one) is stored
    rejected, with why. `received_at`: when an upload kept in the spool was received.
    `intake_key`: the upload's one claim (Batch.intake_key); an upload whose key a batch
    holds already is not stored again, and that batch is returned. Raises
    DatabaseUnavailable when the database cannot be reached (nothing was stored, or
    its commit went through unanswered: the claim tells which, later)."""
    if not files:
        raise IngestError(["no file uploaded"])
    sources = [as_source(f) for f in files]
    total = sum(s.size for s in sources)
    if total > settings.MAX_UPLOAD_BYTES:
        raise UploadTooLarge(
            f"upload is {total:,} bytes; the limit is {settings.MAX_UPLOAD_BYTES:,} bytes "
            "(MAX_UPLOAD_BYTES)"
        )
    errors, name = list(refused or []), None
    if not errors:
        try:
            name = dataset_name(dataset)
        except IngestError as error:
            errors = error.errors
    names = [stored_name(s.name) for s in sources]
    try:
        with transaction.atomic():
            batch = Batch.objects.create(
                intake_key=intake_key,
                file_name=stored_name(", ".join(names)),
                sha256="",
                size_bytes=total,
                created_by=created_by,
                status=Batch.Status.REJECTED if errors else Batch.Status.RECEIVED,
                errors=[storable(error) for error in errors],
                requested_as_of=as_of,
                requested_dataset=name or "",
                rate_keys=None if errors else rate_keys,
                # A Workspace or its id; None: the model's default (the default workspace).
                **({"workspace_id": getattr(workspace, "pk", workspace)} if workspace else {}),
            )
            digests = copy_into(batch, list(zip(names, sources, strict=True)))
            batch.sha256 = combined_sha256(digests)
            if received_at is not None:
                batch.created_at = received_at
            batch.save(update_fields=["sha256", "created_at"])
    except unreachable_errors() as error:
        raise DatabaseUnavailable.of(error) from error
    except IntegrityError:  # the claim is taken: the batch that holds it is this upload
        if intake_key is not None and (stored := _claimed(intake_key)) is not None:
            return stored
        raise
    if errors:
        logger.info("batch %s rejected before parsing; problems: %d", batch.pk, len(errors))
    return batch


def _claimed(intake_key: str) -> Batch | None:
    """The batch stored under this intake key, if any: an upload kept in the spool whose
    store committed though its answer was lost (the database went away at the commit)."""
    stored = Batch.objects.filter(intake_key=intake_key).first()
    if stored is not None:
        logger.warning("upload %s was stored before, as batch %s", intake_key, stored.pk)
    return stored


def name_request(
    batch: Batch,
    *,
    as_of: datetime | None = None,
    dataset: str | None = None,
    rate_keys: list[str] | None = None,
) -> None:
    """Record on a stored batch what its upload asked for, when that was named only after
    the store: by a pull, or by an accept message queued before batches kept their
    request. Raises IngestError when the dataset name cannot be one."""
    batch.requested_as_of = as_of or batch.requested_as_of
    batch.requested_dataset = dataset_name(dataset) or batch.requested_dataset
    batch.rate_keys = rate_keys or batch.rate_keys
    batch.save(update_fields=["requested_as_of", "requested_dataset", "rate_keys"])


def unreachable_errors() -> tuple[type[Exception], ...]:
    """The errors of a database that cannot be reached. Django wraps the driver's errors
    on execute and commit; the COPY in blob_store talks to psycopg directly, so its own
    classes are caught too."""
    driver = connection.Database
    return (OperationalError, InterfaceError, driver.OperationalError, driver.InterfaceError)


def as_source(file: UploadedFile | Source) -> Source:
    if isinstance(file, Source):
        return file
    return Source(name=file.name, size=len(file.data), chunks=lambda: (file.data,))


_NAME_CHARS = 500  # Batch.file_name and BatchFile.name


def stored_name(name: str) -> str:
    """A file name as it can be stored: NUL and lone surrogates (a non-UTF-8 name from
    the CLI) as their \\u escapes, and at most 500 characters, keeping the end, where
    the extension is."""
    name = storable(name)
    if len(name) <= _NAME_CHARS:
        return name
    return name[: _NAME_CHARS // 2 - 1] + "…" + name[-(_NAME_CHARS // 2) :]


def stored_sha256(files: list[UploadedFile]) -> str:
    """The sha256 a Batch of these files gets."""
    return combined_sha256([hashlib.sha256(f.data).hexdigest() for f in files])


def accept(batch: Batch, *, files: list[UploadedFile] | None = None) -> plain.Batch:
    """Parse the stored files (or `files`, the same bytes still in memory, to spare a
    read back) as the upload asked (its requested as-of and dataset, on the batch); mark
    the batch accepted (with counts and its effective as-of time) or rejected (with every
    error). Raises IngestError when rejected."""
    files = files if files is not None else stored_files(batch)
    try:
        parsed = parse(files, as_of=batch.requested_as_of, received_at=batch.created_at)
        name = batch.requested_dataset or parsed.dataset
        if name:
            batch.dataset = dataset_named(batch.workspace_id, name)
            learn_pipelines(batch, parsed)
    except IngestError as error:
        reject(batch, error.errors)
        raise
    except unreachable_errors():  # the database went away: read again once it is back
        raise
    except Exception as error:  # a bug or a memory error: still never left half-done
        reject(batch, [f"the upload could not be read ({type(error).__name__}); re-upload it"])
        raise
    batch.status = Batch.Status.ACCEPTED
    batch.external_id = (parsed.id or "")[:200]
    batch.source = (parsed.source or "")[:50]
    batch.as_of = parsed.as_of
    batch.as_of_source = parsed.as_of_source
    batch.partial = parsed.partial
    batch.ignored_columns = parsed.ignored_columns
    batch.warnings = parsed.warnings  # the reader's; a dataset's arrival adds its own
    batch.missing_columns = missing_columns(parsed)
    batch.companies, batch.contacts, batch.deals = (
        len(parsed.companies),
        len(parsed.contacts),
        len(parsed.deals),
    )
    batch.leads = len(parsed.leads)
    batch.stage_sources = parsed.stage_sources()
    batch.stage_source = parsed.stage_source(batch.stage_sources)
    batch.content_key = serving.content_key(parsed)
    batch.rate_keys = None  # the request is answered from here on
    batch.save()
    return parsed


def accept_stored_upload(batch_id: int) -> Submission | None:
    """Read a stored upload and serve it, as it asked (the request on its row): what a
    worker does with the accept message (intake.tasks.accept_upload), and the spool
    import with what it stored. A refused request (far over the rate limit) is left
    with the reason among its errors. Reads a batch once: a second delivery (a retry,
    the sweep) waits on the first's row lock, then finds it read. Raises the database's
    error when it went away (the task retries)."""
    if not unread(batch_id):  # gone, or a redelivered task whose first run got there
        logger.info("batch %s is gone or already read", batch_id)
        return None
    try:
        with transaction.atomic():
            batch = Batch.objects.select_for_update().filter(pk=batch_id).first()
            if batch is None or not unread(batch_id):
                return None
            return review_stored(batch)
    except ServeRefused as error:
        # Answered: the sweep's resend of it is not counted against the limit again.
        Batch.objects.filter(pk=batch_id).update(errors=[f"refused: {error}"], rate_keys=None)
        return None


def reject(batch: Batch, errors: list[str]) -> None:
    """Mark a stored batch rejected, with why (a parse error, or a request refused
    before parsing: an invalid as-of time, an empty file)."""
    batch.status = Batch.Status.REJECTED
    batch.errors = [storable(error) for error in errors]
    batch.rate_keys = None
    batch.save(update_fields=["status", "errors", "rate_keys"])
    logger.info("batch %s rejected; problems: %d", batch.pk, len(errors))
