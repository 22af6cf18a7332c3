"""API uploads over PARSE_IN_WEB_MAX_BYTES are handled like the form's: stored as they
stream in, answered 202 with the stored batch ("received", no run yet), read and
reviewed by a real worker. An Idempotency-Key on one is answered with its batch."""

from __future__ import annotations

import hashlib
import json
import time

import pytest

from reviews.models import Batch, ReviewRun
from reviews.orchestration.store.blob_store import file_bytes
from revreview.celery import app
from tests.uploads import DATA

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

SEED = (DATA / "seed-example.json").read_bytes()
JSON = {"Content-Type": "application/json"}


def padded(extra: int) -> bytes:
    """The seed batch with an unread top-level key making it `extra` bytes bigger."""
    doc = json.loads(SEED)
    doc["padding"] = "x" * extra
    return json.dumps(doc).encode()


def reviewed(batch_id: int, seconds: float = 90) -> ReviewRun:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        run = ReviewRun.objects.filter(batch_id=batch_id).first()
        if run is not None and run.is_finished:
            return run
        time.sleep(0.3)
    raise AssertionError(f"batch {batch_id} not reviewed in {seconds} s")


@pytest.fixture
def big_from(settings):
    settings.PARSE_IN_WEB_MAX_BYTES = 50_000
    return settings.PARSE_IN_WEB_MAX_BYTES


def test_a_big_json_body_is_stored_and_read_by_a_worker(http, worker, big_from):
    body = padded(2 * big_from)
    response = http.post("/batches", content=body, headers=JSON)

    assert response.status_code == 202, response.text
    answer = response.json()
    assert (answer["status"], answer["run_id"]) == ("received", None)
    assert response.headers["Location"].endswith(f"/batches/{answer['batch_id']}/")
    batch = Batch.objects.get(pk=answer["batch_id"])
    assert batch.sha256 == hashlib.sha256(body).hexdigest()
    assert file_bytes(batch.files.get()) == body
    run = reviewed(batch.pk)
    assert run.status == ReviewRun.Status.DONE
    assert ReviewRun.objects.filter(batch=batch).count() == 1


def test_big_multipart_files_are_stored_and_read_by_a_worker(http, worker, big_from):
    body = padded(2 * big_from)
    response = http.post(
        "/batches", files=[("files", ("big.json", body))], data={"dataset": "acme-hubspot"}
    )

    assert response.status_code == 202, response.text
    batch = Batch.objects.get(pk=response.json()["batch_id"])
    assert file_bytes(batch.files.get()) == body
    run = reviewed(batch.pk)
    assert run.status == ReviewRun.Status.DONE
    batch.refresh_from_db()
    assert batch.dataset.name == "acme-hubspot"


def test_a_retry_of_a_big_upload_with_its_key_is_answered_with_the_stored_batch(
    http, worker, big_from
):
    body = padded(2 * big_from)
    headers = {**JSON, "Idempotency-Key": "big-nightly"}
    first = http.post("/batches", content=body, headers=headers)
    run = reviewed(first.json()["batch_id"])
    again = http.post("/batches", content=body, headers=headers)

    assert first.status_code == again.status_code == 202
    assert again.headers["Idempotent-Replayed"] == "true"
    assert (again.json()["batch_id"], again.json()["run_id"]) == (run.batch_id, run.pk)
    assert Batch.objects.count() == 1


@pytest.fixture
def no_worker():
    """Tasks go to the broker and no worker takes them: a batch stays unread."""
    app.conf.task_always_eager = False
    yield
    app.conf.task_always_eager = True


def test_a_key_on_a_stored_batch_not_read_yet_is_answered_with_it(http, big_from, no_worker):
    """No worker: the batch waits unread, and a retry gets it, not a second batch."""
    body = padded(2 * big_from)
    headers = {**JSON, "Idempotency-Key": "waiting"}
    first = http.post("/batches", content=body, headers=headers)
    again = http.post("/batches", content=body, headers=headers)

    assert first.status_code == again.status_code == 202, again.text
    assert again.json() == {**first.json(), "detail": again.json()["detail"]}
    assert again.json()["status"] == "received"
    assert Batch.objects.count() == 1
