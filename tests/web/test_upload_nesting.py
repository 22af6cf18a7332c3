"""JSON nested past the readers' limit through the upload form: 400 naming the limit
(MAX_JSON_DEPTH), the upload kept; also inside a ZIP and as CRM API JSON."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from reviews.engine.ingest.errors import MAX_JSON_DEPTH
from reviews.models import Batch
from reviews.orchestration.store.blob_store import file_bytes
from tests.engine.ingest.helpers import zipped
from tests.engine.ingest.test_nesting import shapes

pytestmark = pytest.mark.django_db

DEEP = shapes(MAX_JSON_DEPTH * 2)
CASES = [
    ("top.json", DEEP["top"]),
    ("value.json", DEEP["record-value"]),
    ("nul.json", DEEP["record-value-nul"]),
    ("deals.json", DEEP["crm-api"]),
    ("upload.zip", zipped({"deals.json": DEEP["record-value"]})),
]


@pytest.mark.parametrize(("name", "data"), CASES, ids=[name for name, _ in CASES])
def test_deep_json_on_the_form_is_400_naming_the_limit_and_kept(member_client, name, data):
    upload = SimpleUploadedFile(name, data)
    response = member_client.post(reverse("reviews:upload"), {"files": [upload]})

    assert response.status_code == 400
    assert "MAX_JSON_DEPTH" in response.content.decode()
    (batch,) = Batch.objects.all()
    assert batch.status == Batch.Status.REJECTED
    assert file_bytes(batch.files.get()) == data
    assert "nested too deeply" in batch.errors[0]
