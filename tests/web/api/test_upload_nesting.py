"""JSON nested past the readers' limit through the API: 400 naming the limit
(MAX_JSON_DEPTH) with the stored batch's id, never a 500."""

from __future__ import annotations

import pytest

from reviews.models import Batch
from reviews.orchestration.store.blob_store import file_bytes
from tests.web.test_upload_nesting import CASES, DEEP

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("shape", ["top", "record-value", "record-value-nul", "crm-api"])
def test_deep_json_as_the_body_is_400_naming_the_limit_and_kept(http, shape):
    body = DEEP[shape]
    response = http.post("/batches", content=body, headers={"Content-Type": "application/json"})

    assert response.status_code == 400, response.text
    answer = response.json()
    assert "MAX_JSON_DEPTH" in answer["errors"][0]["message"] + answer["errors"][0]["location"]
    batch = Batch.objects.get(pk=answer["batch_id"])
    assert (batch.status, file_bytes(batch.files.get())) == (Batch.Status.REJECTED, body)


@pytest.mark.parametrize(("name", "data"), CASES, ids=[name for name, _ in CASES])
def test_deep_json_as_files_is_400_naming_the_limit_and_kept(http, name, data):
    response = http.post("/batches", files=[("files", (name, data))])

    assert response.status_code == 400, response.text
    batch = Batch.objects.get(pk=response.json()["batch_id"])
    assert file_bytes(batch.files.get()) == data
    assert "MAX_JSON_DEPTH" in batch.errors[0]
