"""An upload of an empty file (0 bytes) is refused with an error that says the file is
empty and names it, on the upload page and from the API; the upload is kept, rejected."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from reviews.apiauth.tokens import create_token
from reviews.models import Batch

pytestmark = pytest.mark.django_db

EMPTY = "hubspot-deals-2026-08-01.csv"


def test_the_upload_page_says_which_file_is_empty(member_client):
    response = member_client.post(
        reverse("reviews:upload"), {"files": [SimpleUploadedFile(EMPTY, b"")]}
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert f"<code>{EMPTY}</code>: the file is empty (0 bytes)" in page
    batch = Batch.objects.get()
    assert batch.status == Batch.Status.REJECTED
    assert batch.errors == [f"{EMPTY}: the file is empty (0 bytes)"]


def test_the_api_says_which_file_is_empty(client, django_user_model):
    user = django_user_model.objects.create_user("robot", password="robot-pass-123")
    secret = create_token(user, "nightly").secret
    response = client.post(
        reverse("api:batches"),
        {"files": [SimpleUploadedFile("batch.json", b"")]},
        headers={"Authorization": f"Bearer {secret}"},
    )
    assert response.status_code == 400, response.content
    assert response.json()["errors"] == [
        {"location": "batch.json", "message": "the file is empty (0 bytes)"}
    ]
