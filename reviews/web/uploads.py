"""Receiving uploads: the size limit enforced while the body is read, and the received
files handed on as chunked sources (reviews.orchestration.stored_files).

Django spools a file over FILE_UPLOAD_MAX_MEMORY_SIZE to a temporary file as it
arrives; this handler sits before Django's own in FILE_UPLOAD_HANDLERS and stops the
upload once its files pass MAX_UPLOAD_BYTES, so an oversized body is never written
out whole, let alone read into memory."""

from __future__ import annotations

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile as DjangoUploadedFile
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.http import HttpRequest

from reviews.orchestration.stored_files import Source

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
