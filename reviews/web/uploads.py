"""Receiving uploads: the upload page, the size limit enforced while the body is read,
and the received files handed on as chunked sources (reviews.orchestration.store.blob_store).

Django spools a file over FILE_UPLOAD_MAX_MEMORY_SIZE to a temporary file as it
arrives (the body read by reviews.web.multipart, which hands each file to the handlers
after it); UploadLimitHandler sits before Django's own in FILE_UPLOAD_HANDLERS and stops the
upload once its files pass MAX_UPLOAD_BYTES, so an oversized body is never written
out whole, let alone read into memory."""

from __future__ import annotations

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile as DjangoUploadedFile
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.db.models import Max
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from reviews.engine.ingest import IngestError
from reviews.models import Batch, Dataset, ReviewRun
from reviews.orchestration.intake import entry
from reviews.orchestration.intake.serve import ServeRefused
from reviews.orchestration.intake.submit import (
    DatabaseUnavailable,
    UploadTooLarge,
    unreachable_errors,
)
from reviews.orchestration.store import spool
from reviews.orchestration.store.blob_store import Source
from reviews.web.client_address import request_rate_keys
from reviews.web.forms import UploadForm
from reviews.web.offline_auth import login_required_or_offline, offline_sender
from reviews.web.unavailable import unavailable_page
from reviews.web.views import refused, split_errors
from workspaces.access import scope, workspaces_of
from workspaces.models import Role


@login_required_or_offline
@require_http_methods(["GET", "POST"])
def upload(request: HttpRequest) -> HttpResponse:
    """Every upload received is stored, even one refused before parsing (an invalid
    as-of time, an empty file), with the reason; only one over the size limit is not,
    since it was cut off while arriving. The intake (reviews.orchestration.intake.entry)
    parses a small upload here, answered at once (400 with every error if rejected),
    and hands a big one to a worker, the batch page following it. One that cannot be
    stored because the database is down, even down before its user could be loaded
    (reviews.web.offline_auth), is kept in the spool and answered 503."""
    if request.method == "GET":
        return upload_page(request, UploadForm(workspaces=upload_workspaces(request)))
    offline = offline_sender(request)
    choices, unreachable = None, None
    if offline is None:
        try:
            choices = upload_workspaces(request)
        except unreachable_errors() as error:  # down since the user was loaded: keep it
            unreachable = str(DatabaseUnavailable.of(error))
    form = UploadForm(request.POST, request.FILES, workspaces=choices)
    too_large = too_large_message(request)
    if too_large:
        form.add_error(None, too_large)
        return upload_page(request, form, status=413)
    received = request.FILES.getlist("files")
    if offline is not None or unreachable is not None:
        if not received:
            return unavailable_page()  # nothing to keep
        # Signed in, but the database could not load the user, or went away since.
        why = offline.error if offline is not None else unreachable
        return receive(request, form, received, None, offline=why)
    if not choices:  # a member who may only read, or of no workspace: nothing is stored
        form.add_error(None, "you may upload in none of your workspaces (reviewer role needed)")
        return upload_page(request, form, status=403)
    if not received or form.has_error("files", "too_large"):
        return upload_page(request, form, status=400)  # nothing to store
    return receive(request, form, received, chosen(form, choices))


def upload_workspaces(request: HttpRequest) -> list[tuple[int, str]]:
    """The workspaces the user may upload to (reviewer or admin), as form choices."""
    return list(workspaces_of(request.user, Role.REVIEWER).values_list("pk", "name"))


def chosen(form: UploadForm, choices: list[tuple[int, str]]) -> int:
    """The workspace picked on the form (one of `choices`), or the first of them."""
    picked = form.cleaned_data.get("workspace") if form.is_valid() else None
    return picked if picked in dict(choices) else choices[0][0]


def receive(
    request: HttpRequest,
    form: UploadForm,
    received: list,
    workspace_id: int | None,
    *,
    offline: str | None = None,
) -> HttpResponse:
    """Hand the received files to the intake, then answer: the run, the rejected batch
    (a form that refused the upload stores it rejected with its errors), the batch page
    of an upload a worker reads, or the page saying it is kept until the database is
    back (503)."""
    try:
        taken = entry.receive(
            as_sources(received), upload_request(request, form, workspace_id), offline=offline
        )
    except spool.SpoolFull:
        return unavailable_page("reviews/not_kept.html", message=NOT_KEPT)
    except ServeRefused as error:
        return refused(request, error)
    except (UploadTooLarge, IngestError) as error:
        form.add_error("files", str(error))
        return upload_page(request, form, status=400)
    if taken.route == entry.Route.SPOOL:
        return unavailable_page("reviews/spooled.html", message=SPOOLED, spool_id=taken.spool_id)
    if taken.route == entry.Route.WORKER:
        return redirect("reviews:batch", taken.batch.pk)
    if taken.accepted:
        return redirect("reviews:run", taken.run.pk)
    # stored as received; the errors are on it
    return upload_page(request, form, rejected=taken.batch, status=400)


def upload_request(
    request: HttpRequest, form: UploadForm, workspace_id: int | None
) -> entry.Request:
    """What the form asked for, stored in `workspace_id` (chosen among those the user may
    upload to). With the database down the form is checked without it (the workspace
    it named is checked at import), and the user is known by its id alone
    (reviews.web.offline_auth)."""
    valid = form.is_valid()
    fields = form.cleaned_data if valid else {}
    offline = offline_sender(request)
    user_id = offline.user_id if offline is not None else request.user.pk
    return entry.Request(
        channel="form",
        user=None if offline is not None else request.user,
        user_id=user_id,
        sender=offline.sender if offline is not None else None,
        workspace_id=workspace_id,
        named_workspace_id=fields.get("workspace"),
        as_of=fields.get("as_of"),
        dataset=fields.get("dataset") or None,
        # `user_id` as given: with the database down, request.user cannot be loaded.
        rate_keys=request_rate_keys(request, user_id=user_id),
        refused=() if valid else tuple(form_errors(form)),
    )


SPOOLED = "the database is unavailable; your upload is kept and will be reviewed when it is back"
NOT_KEPT = (
    "the database is unavailable and the space for uploads kept until it is back is full: "
    "your upload was not kept; send it again later"
)


def form_errors(form: UploadForm) -> list[str]:
    """The form's errors as batch errors: 'as_of: Enter a valid date/time.'"""
    return [
        f"{field}: {message}" if field != "__all__" else message
        for field, messages in form.errors.items()
        for message in messages
    ]


def upload_page(
    request: HttpRequest, form: UploadForm, *, rejected: Batch | None = None, status: int = 200
) -> HttpResponse:
    context = {
        "form": form,
        "rejected": rejected,
        "errors": split_errors(rejected.errors) if rejected else [],
        "recent": recent_uploads(request),
        # The user's datasets, suggested in the Dataset field.
        "dataset_names": scope(Dataset.objects.all(), request.user, "workspace")
        .filter(batches__created_by=request.user)
        .values_list("name", flat=True)
        .distinct()[:50],
        "max_upload_mb": settings.MAX_UPLOAD_BYTES // (1024 * 1024),
    }
    return render(request, "reviews/upload.html", context, status=status)


def recent_uploads(request: HttpRequest, limit: int = 8) -> list[Batch]:
    """The newest uploads of the user's workspaces, each with its latest run and that
    run's verdict (`latest`, None for a rejected batch): two queries for the list."""
    batches = list(
        scope(Batch.objects.all(), request.user, "workspace")
        .annotate(latest_run=Max("runs__id"))
        .order_by("-created_at")[:limit]
    )
    runs = ReviewRun.objects.select_related("verdict").in_bulk(
        [b.latest_run for b in batches if b.latest_run]
    )
    for batch in batches:
        batch.latest = runs.get(batch.latest_run)
    return batches


# request attribute set when the upload was cut off: the bytes received by then
TOO_LARGE = "upload_too_large"
CHUNK_BYTES = 1024 * 1024


class UploadLimitHandler(FileUploadHandler):
    """Counts the bytes of every file in the request; past MAX_UPLOAD_BYTES it stops
    the upload (the rest of the body is read and dropped, so the client still gets
    the page that says why)."""

    def __init__(self, request: HttpRequest | None = None) -> None:
        super().__init__(request)
        self.received = 0
        self.declared_too_large = 0

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        # The multipart envelope adds a few hundred bytes a file: a body far past the
        # limit is refused at its first file, before a byte is spooled. (Raising here
        # would escape Django's parser; new_file is inside it.)
        if content_length > settings.MAX_UPLOAD_BYTES + 64 * 1024:
            self.declared_too_large = content_length
        return None

    def new_file(self, *args, **kwargs) -> None:
        super().new_file(*args, **kwargs)
        if self.declared_too_large:
            self._refuse(self.declared_too_large)

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.received += len(raw_data)
        if self.received > settings.MAX_UPLOAD_BYTES:
            self._refuse(self.received)
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None  # the next handler (memory or temporary file) makes the file

    def _refuse(self, size: int) -> None:
        if self.request is not None:
            setattr(self.request, TOO_LARGE, size)
        raise StopUpload(connection_reset=False)


def too_large_message(request: HttpRequest) -> str | None:
    size = getattr(request, TOO_LARGE, None)
    if size is None:
        return None
    return (
        f"upload is over {size:,} bytes; the limit is {settings.MAX_UPLOAD_BYTES:,} bytes "
        "(MAX_UPLOAD_BYTES)"
    )


def as_sources(files: list[DjangoUploadedFile]) -> list[Source]:
    """Received files as chunked sources, read from memory or their temporary file."""
    return [
        Source(name=f.name or "", size=f.size or 0, chunks=lambda f=f: _chunks(f)) for f in files
    ]


def _chunks(file: DjangoUploadedFile):
    file.seek(0)
    return file.chunks(CHUNK_BYTES)
