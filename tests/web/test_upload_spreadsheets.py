"""A hostile spreadsheet over the upload form (issue 21): stored, answered 400 naming
the file, never 500."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from reviews.models import Batch
from reviews.orchestration.store.blob_store import file_bytes
from tests.engine.ingest.test_hostile_spreadsheets import REFUSED

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("case", ["sparse cells", "zip bomb", "xls dimensions"])
def test_hostile_spreadsheet_upload_is_stored_and_answered_400(member_client, settings, case):
    settings.MAX_UPLOAD_BYTES = 50 * 1024 * 1024  # the zip bomb unpacks to 60 MB
    build, extension, _ = REFUSED[case]
    data = build()

    response = member_client.post(
        reverse("reviews:upload"), {"files": [SimpleUploadedFile(f"deals{extension}", data)]}
    )

    assert response.status_code == 400
    (batch,) = Batch.objects.all()
    assert file_bytes(batch.files.get()) == data
    assert batch.status == Batch.Status.REJECTED
    assert batch.errors[0].startswith(f"deals{extension}: ")
