"""Multipart bodies (the upload form, POST /api/v1/batches) read so that no file part is
dropped for its name: a file whose name is empty, or holds only characters that cannot
be kept (control characters, a path), is kept under a safe name made here.

Django's MultiPartParser drops such a part before any upload handler sees it: an empty
`filename=""` makes it a text field (its bytes decoded, in memory), a name left empty by
sanitize_file_name is skipped (`if not file_name: continue`), and a header that is not
UTF-8 is skipped with its part. Both happen inside one long private method, so a
subclass would have to copy it. Instead, MultipartHandler sits first in
FILE_UPLOAD_HANDLERS and reads the body itself in `handle_raw_input` (the hook Django
gives handlers to take over the parse), with the `multipart` library (defnull's, the
parser of Bottle) for the framing, and feeds every file part to the handlers after it
exactly as Django's parser does: the size limit (reviews.web.uploads), then memory or a
temporary file. So a file is still streamed to disk in 64 KiB chunks as it arrives,
never held whole, and Django's DATA_UPLOAD_* limits still hold."""

from __future__ import annotations

import html
from datetime import UTC, datetime

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.core.files.uploadhandler import (
    FileUploadHandler,
    SkipFile,
    StopFutureHandlers,
    StopUpload,
)
from django.http import QueryDict
from django.http.multipartparser import MultiPartParserError, exhaust
from django.utils.datastructures import MultiValueDict
from django.utils.http import parse_header_parameters
from multipart import MultipartError, MultipartSegment, PushMultipartParser

CHUNK_BYTES = 64 * 1024  # Django's handler chunk size: what a handler gets at a time
# A part's headers: a long file name fits (Django allows up to 1 MiB); more is refused.
_MAX_HEADER_BYTES = 64 * 1024
_MAX_HEADERS = 32


class MultipartHandler(FileUploadHandler):
    """Reads a multipart body for the handlers listed after it (see the module)."""

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        handlers = [h for h in self.request.upload_handlers if h is not self]
        for handler in handlers:  # what Django's parser would have asked them
            result = handler.handle_raw_input(input_data, META, content_length, boundary, encoding)
            if result is not None:
                return result
        body = Body(handlers, encoding or settings.DEFAULT_CHARSET)
        return body.read(input_data, content_length, boundary)

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        return raw_data  # never called: handle_raw_input has read the body

    def file_complete(self, file_size: int) -> None:
        return None


def safe_file_name(given: str | None, index: int, received: datetime) -> str:
    """The name a received file is kept under: its own, without a path or characters
    that cannot be printed (as Django's parser does), else `upload-<UTC time>-<n>` for the
    n-th file of the request. Without an extension: the reader tells JSON, CSV,
    spreadsheets and ZIPs apart by their first bytes (reviews.engine.ingest.file_type)."""
    name = html.unescape(given or "")
    name = name.rsplit("/")[-1].rsplit("\\")[-1]
    name = "".join(char for char in name if char.isprintable()).strip()
    if name in {"", ".", ".."}:
        return f"upload-{received:%Y%m%d-%H%M%S}-{index}"
    return name


def _header_text(value: str) -> str:
    # Headers are read as Latin-1 (every byte is a character), then taken as the UTF-8
    # that browsers send; bytes that are not UTF-8 become U+FFFD, as in Django's parser.
    return value.encode("latin-1").decode("utf-8", errors="replace")


class Body:
    """One multipart body read into (POST, FILES), file parts through `handlers`."""

    def __init__(self, handlers: list[FileUploadHandler], encoding: str) -> None:
        self.handlers = handlers
        self.encoding = encoding
        self.post = QueryDict(mutable=True, encoding=encoding)
        self.files = MultiValueDict()
        self.received = datetime.now(UTC)
        self.field: tuple[str, bytearray] | None = None  # a text field being read
        self.file: str | None = None  # the form field of a file being read
        self.skipping = False  # the rest of this part is dropped (no name, SkipFile)
        self.counters: list[int] = []
        self.field_count = 0
        self.file_count = 0
        self.field_bytes = 0

    def read(self, stream, content_length: int, boundary: bytes):
        parser = PushMultipartParser(
            boundary,
            content_length=content_length,
            max_header_size=_MAX_HEADER_BYTES,
            max_header_count=_MAX_HEADERS,
            header_charset="latin-1",
        )
        try:
            with parser:
                while not parser.closed:
                    chunk = stream.read(CHUNK_BYTES)
                    for event in parser.parse(chunk):  # b"" at the end: checked complete
                        if isinstance(event, MultipartSegment):
                            self.start(event)
                        elif event is None:
                            self.end()
                        else:
                            self.data(bytes(event))
        except StopUpload as stop:  # a handler stopped it (over MAX_UPLOAD_BYTES)
            self._close_files()
            if not stop.connection_reset:
                exhaust(stream)
        except MultipartError as error:
            self._interrupted()
            raise MultiPartParserError(str(error)) from error
        except BaseException:
            self._interrupted()
            raise
        any(handler.upload_complete() for handler in self.handlers)
        self.post._mutable = False
        return self.post, self.files

    def start(self, segment: MultipartSegment) -> None:
        disposition = segment.header("Content-Disposition", "")
        params = parse_header_parameters(_header_text(disposition))[1]
        name = params.get("name")
        self.skipping = name is None
        if name is None:  # not a form field: dropped, as Django's parser does
            return
        name = name.strip()
        if "filename" not in params:
            self._count_field()
            self.field = (name, bytearray())
            return
        self._count_file()
        self.file = name
        self.counters = [0] * len(self.handlers)
        file_name = safe_file_name(params["filename"], self.file_count, self.received)
        content_type, extra = parse_header_parameters(
            _header_text(segment.header("Content-Type", ""))
        )
        try:
            for handler in self.handlers:
                try:
                    handler.new_file(
                        name, file_name, content_type, None, extra.get("charset"), extra
                    )
                except StopFutureHandlers:
                    break
        except SkipFile:
            self._skip_file()

    def data(self, chunk: bytes) -> None:
        # A part's Content-Transfer-Encoding is not applied (RFC 7578 forbids senders to
        # use one): its bytes are kept as sent.
        if self.skipping:
            return
        if self.field is not None:
            self.field_bytes += len(chunk)
            self._check_field_bytes()
            self.field[1].extend(chunk)
            return
        try:
            for i, handler in enumerate(self.handlers):
                size = len(chunk)
                chunk = handler.receive_data_chunk(chunk, self.counters[i])
                self.counters[i] += size
                if chunk is None:  # this handler kept it
                    break
        except SkipFile:
            self._skip_file()

    def end(self) -> None:
        if self.field is not None:
            name, value = self.field
            self.field_bytes += len(name) + 2  # as Django counts `name=` and `&`
            self._check_field_bytes()
            self.post.appendlist(name, value.decode(self.encoding, errors="replace"))
        elif self.file is not None and not self.skipping:
            for i, handler in enumerate(self.handlers):
                uploaded = handler.file_complete(self.counters[i])
                if uploaded:
                    self.files.appendlist(self.file, uploaded)
                    break
        self.field, self.file, self.skipping = None, None, False

    def _count_field(self) -> None:
        self.field_count += 1
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
        if limit is not None and self.field_count > limit:
            raise TooManyFieldsSent(
                "The number of GET/POST parameters exceeded settings.DATA_UPLOAD_MAX_NUMBER_FIELDS."
            )

    def _count_file(self) -> None:
        self.file_count += 1
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FILES
        if limit is not None and self.file_count > limit:
            raise TooManyFilesSent(
                "The number of files exceeded settings.DATA_UPLOAD_MAX_NUMBER_FILES."
            )

    def _check_field_bytes(self) -> None:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None and self.field_bytes > limit:
            raise RequestDataTooBig("Request body exceeded settings.DATA_UPLOAD_MAX_MEMORY_SIZE.")

    def _skip_file(self) -> None:
        self._close_files()
        self.skipping = True

    def _interrupted(self) -> None:
        """The body broke off or was refused: no file half-kept."""
        if self.file is not None:
            for handler in self.handlers:
                handler.upload_interrupted()
        self._close_files()
        for files in self.files.lists():
            for uploaded in files[1]:
                uploaded.close()

    def _close_files(self) -> None:
        # As Django's parser: the file a handler was writing, e.g. its temporary file.
        for handler in self.handlers:
            if hasattr(handler, "file"):
                handler.file.close()
