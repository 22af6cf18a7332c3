"""A file whose name is empty or cannot be kept (only control characters) is kept under a
safe name and reviewed, through the upload form and POST /api/v1/batches: Django's own
parser dropped it ("This field is required", nothing stored). The bodies are built by
hand, since no client library sends such names."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import TemporaryUploadedFile
from django.urls import reverse

from reviews.apiauth.tokens import create_token
from reviews.models import Batch, ReviewRun
from reviews.orchestration.store.blob_store import file_bytes
from tests.uploads import DATA

pytestmark = pytest.mark.django_db

SEED = (DATA / "seed-example.json").read_bytes()
SAMPLES = DATA.parent.parent / "samples" / "hubspot"
BOUNDARY = "----revreview-test-boundary"
SAFE = re.compile(r"upload-\d{8}-\d{6}-(\d+)")
UNNAMED = [b"", b"\x00\x01"]


def multipart(*parts: tuple[str, bytes | None, bytes]) -> bytes:
    """A multipart/form-data body: (field, raw filename or None for a text field, bytes)."""
    body = b""
    for field, filename, data in parts:
        disposition = b'form-data; name="%s"' % field.encode()
        if filename is not None:
            disposition += b'; filename="%s"' % filename
        body += b"--%s\r\nContent-Disposition: %s\r\n" % (BOUNDARY.encode(), disposition)
        if filename is not None:
            body += b"Content-Type: application/octet-stream\r\n"
        body += b"\r\n" + data + b"\r\n"
    return body + b"--%s--\r\n" % BOUNDARY.encode()


def post_raw(client, url: str, body: bytes, **headers):
    content_type = f"multipart/form-data; boundary={BOUNDARY}"
    return client.post(url, data=body, content_type=content_type, headers=headers)


def only_batch() -> Batch:
    return Batch.objects.get()


def stored_files(batch: Batch) -> dict[str, bytes]:
    return {f.name: file_bytes(f) for f in batch.files.order_by("pk")}


@pytest.mark.parametrize("filename", UNNAMED, ids=["empty", "control-characters"])
def test_the_form_keeps_a_file_without_a_usable_name_and_reviews_it(
    member_client, django_capture_on_commit_callbacks, filename
):
    body = multipart(("files", filename, SEED), ("dataset", None, b"acme-crm"))
    with django_capture_on_commit_callbacks(execute=True):
        response = post_raw(member_client, reverse("reviews:upload"), body)

    assert response.status_code == 302, response.content.decode()[:2000]
    batch = only_batch()
    ((name, data),) = stored_files(batch).items()
    assert SAFE.fullmatch(name) and SAFE.fullmatch(name).group(1) == "1"
    assert data == SEED
    assert (batch.status, batch.dataset.name) == (Batch.Status.ACCEPTED, "acme-crm")
    assert batch.runs.get().status == ReviewRun.Status.DONE


def test_the_form_keeps_a_csv_export_whose_files_have_no_usable_names(
    member_client, django_capture_on_commit_callbacks
):
    companies = (SAMPLES / "companies.csv").read_bytes()
    deals = (SAMPLES / "deals.csv").read_bytes()
    body = multipart(("files", b"", companies), ("files", b"\x00\x01", deals))
    with django_capture_on_commit_callbacks(execute=True):
        response = post_raw(member_client, reverse("reviews:upload"), body)

    assert response.status_code == 302, response.content.decode()[:2000]
    files = stored_files(only_batch())
    assert [SAFE.fullmatch(n).group(1) for n in files] == ["1", "2"]  # told apart
    assert list(files.values()) == [companies, deals]
    assert only_batch().runs.get().status == ReviewRun.Status.DONE


def test_a_name_that_is_not_utf8_is_kept_with_a_replacement_character(
    member_client, django_capture_on_commit_callbacks
):
    body = multipart(("files", b"caf\xe9.json", SEED))
    with django_capture_on_commit_callbacks(execute=True):
        response = post_raw(member_client, reverse("reviews:upload"), body)

    assert response.status_code == 302
    assert stored_files(only_batch()) == {"caf\ufffd.json": SEED}


def test_a_path_or_control_characters_are_taken_out_of_a_name(
    member_client, django_capture_on_commit_callbacks
):
    body = multipart(("files", b"C:\\exports\\night\x00ly.json", SEED))
    with django_capture_on_commit_callbacks(execute=True):
        post_raw(member_client, reverse("reviews:upload"), body)

    assert stored_files(only_batch()) == {"nightly.json": SEED}


def test_a_big_unnamed_file_is_streamed_to_a_temporary_file_and_read_by_a_worker(
    member_client, settings, django_capture_on_commit_callbacks, monkeypatch
):
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 100  # the upload goes to a temporary file
    settings.PARSE_IN_WEB_MAX_BYTES = 100  # and is stored for a worker to parse
    received = []
    made = TemporaryUploadedFile.__init__

    def seen(self, name, *args, **kwargs):  # Django's handler made a temporary file of it
        received.append(name)
        made(self, name, *args, **kwargs)

    monkeypatch.setattr(TemporaryUploadedFile, "__init__", seen)
    body = multipart(("files", b"", SEED))
    with django_capture_on_commit_callbacks(execute=True):
        response = post_raw(member_client, reverse("reviews:upload"), body)

    batch = only_batch()
    assert response.status_code == 302
    assert response["Location"] == reverse("reviews:batch", args=[batch.pk])
    ((name, data),) = stored_files(batch).items()
    assert SAFE.fullmatch(name) and data == SEED
    assert name in received  # it went to disk, not memory
    assert batch.runs.get().status == ReviewRun.Status.DONE


def test_an_upload_past_the_limit_is_still_cut_off(member_client, settings):
    settings.MAX_UPLOAD_BYTES = len(SEED) - 1
    response = post_raw(member_client, reverse("reviews:upload"), multipart(("files", b"", SEED)))

    assert response.status_code == 413
    assert "MAX_UPLOAD_BYTES" in response.content.decode()
    assert not Batch.objects.exists()


@pytest.fixture
def bearer(django_user_model) -> str:
    user = django_user_model.objects.create_user("robot", password="robot-pass-123")
    return f"Bearer {create_token(user, 'nightly export').secret}"


@pytest.mark.parametrize("filename", UNNAMED, ids=["empty", "control-characters"])
def test_the_api_keeps_a_file_without_a_usable_name_and_reviews_it(
    client, bearer, django_capture_on_commit_callbacks, filename
):
    body = multipart(("files", filename, SEED), ("dataset", None, b"acme-crm"))
    with django_capture_on_commit_callbacks(execute=True):
        response = post_raw(client, reverse("api:batches"), body, Authorization=bearer)

    assert response.status_code == 202, response.content
    batch = Batch.objects.get(pk=response.json()["batch_id"])
    ((name, data),) = stored_files(batch).items()
    assert SAFE.fullmatch(name) and data == SEED
    assert batch.dataset.name == "acme-crm"
    assert batch.runs.get().status == ReviewRun.Status.DONE


def test_the_api_streams_a_big_unnamed_file_to_a_worker(
    client, bearer, settings, django_capture_on_commit_callbacks
):
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 100
    settings.PARSE_IN_WEB_MAX_BYTES = 100
    body = multipart(("files", b"\x00\x01", SEED))
    with django_capture_on_commit_callbacks(execute=True):
        response = post_raw(client, reverse("api:batches"), body, Authorization=bearer)

    assert response.status_code == 202, response.content
    assert response.json()["run_id"] is None  # stored, read by a worker
    batch = Batch.objects.get(pk=response.json()["batch_id"])
    ((name, data),) = stored_files(batch).items()
    assert SAFE.fullmatch(name) and data == SEED
    assert batch.runs.get().status == ReviewRun.Status.DONE


def test_a_broken_multipart_body_is_refused_by_the_api(client, bearer):
    body = multipart(("files", b"", SEED))[:-20]  # cut off before its last boundary
    response = post_raw(client, reverse("api:batches"), body, Authorization=bearer)

    assert response.status_code == 422
    assert "unreadable multipart body" in response.json()["detail"]
    assert not Batch.objects.exists()
