"""A CSV that is not UTF-8 is kept (issue 40): through the upload form and the API, the
issue's invalid UTF-8 sequence is read as cp1252 and reviewed, and a byte that is text
in none of the encodings tried leaves a stored, rejected batch whose error names the
line and column, like every other structural error."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from reviews.apiauth.tokens import create_token
from reviews.models import Batch, BatchFile, ReviewRun
from reviews.orchestration.store.blob_store import file_bytes

pytestmark = pytest.mark.django_db

HEADER = b"Record ID,Deal Name,Amount,Close Date\n"
INVALID_UTF8 = HEADER + b"5001,Harbor \xed\xa0\x80renewal,42000,2026-09-30\n"
UNDECODABLE = HEADER + b"5001,Caf\xe9,42000,2026-09-30\n5002,Harbor \x81renewal,900,2026-10-31\n"
WHERE = "deals.csv line 3, column 13: byte 0x81 is not text in UTF-8 or in Windows-1252"


def form_upload(client, data: bytes):
    return client.post(
        reverse("reviews:upload"), {"files": [SimpleUploadedFile("deals.csv", data)]}
    )


def api_upload(client, user, data: bytes):
    secret = create_token(user, "nightly export").secret
    return client.post(
        "/api/v1/batches",
        {"files": [SimpleUploadedFile("deals.csv", data, "text/csv")]},
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )


def the_batch(data: bytes) -> Batch:
    (batch,) = Batch.objects.all()
    assert file_bytes(BatchFile.objects.get(batch=batch)) == data  # kept byte for byte
    return batch


def test_an_invalid_utf8_sequence_uploaded_on_the_form_is_read_and_reviewed(
    member_client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = form_upload(member_client, INVALID_UTF8)

    assert response.status_code == 302
    batch = the_batch(INVALID_UTF8)
    assert batch.status == Batch.Status.ACCEPTED
    assert batch.runs.get().status == ReviewRun.Status.DONE


def test_an_invalid_utf8_sequence_uploaded_by_the_api_is_accepted(client, member):
    response = api_upload(client, member, INVALID_UTF8)

    assert response.status_code == 202, response.content
    assert the_batch(INVALID_UTF8).status == Batch.Status.ACCEPTED


def test_an_undecodable_byte_uploaded_on_the_form_is_kept_rejected_with_its_line_and_column(
    member_client,
):
    response = form_upload(member_client, UNDECODABLE)

    assert response.status_code == 400
    batch = the_batch(UNDECODABLE)
    assert batch.status == Batch.Status.REJECTED
    assert batch.errors[0].startswith(WHERE)
    assert "line 3, column 13" in response.content.decode()


def test_an_undecodable_byte_uploaded_by_the_api_is_kept_rejected_with_its_line_and_column(
    client, member
):
    response = api_upload(client, member, UNDECODABLE)

    assert response.status_code == 400
    answer = response.json()
    batch = the_batch(UNDECODABLE)
    assert (answer["batch_id"], batch.status) == (batch.pk, Batch.Status.REJECTED)
    assert batch.errors[0].startswith(WHERE)
    [error] = answer["errors"]
    assert WHERE in error["message"]
