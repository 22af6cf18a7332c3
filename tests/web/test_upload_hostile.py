"""Uploads that used to answer 500 or lose the batch: each is stored, then answered 400
with named errors or reviewed; big ones are streamed and parsed by the worker."""

from __future__ import annotations

import json
import logging

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings
from django.urls import reverse

from reviews.models import Batch, BatchFile, ReviewRun
from reviews.orchestration.store.blob_store import file_bytes
from tests.engine.ingest.helpers import batch_doc
from tests.uploads import DATA

pytestmark = pytest.mark.django_db

NINES = b"9" * 5000


def post(client, *files: tuple[str, bytes], **data):
    uploads = [SimpleUploadedFile(name, content) for name, content in files]
    return client.post(reverse("reviews:upload"), {"files": uploads, **data})


def doc_bytes(**lists) -> bytes:
    return json.dumps(batch_doc(**lists)).encode()  # hostile characters as \\u escapes


def stored(data: bytes) -> Batch:
    """The one batch holding exactly these bytes."""
    (batch,) = [b for b in Batch.objects.all() if file_bytes(b.files.get()) == data]
    return batch


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("id-nul.json", doc_bytes(id="batch\x00")),
        ("id-surrogate.json", doc_bytes(id="batch\udc80")),
        ("source-nul.json", doc_bytes(source="hub\x00spot")),
        ("source-surrogate.json", doc_bytes(source="hub\ud800spot")),
        ("close-date.json", b'{"companies":[],"contacts":[],"deals":[{"id":"d","closeDate":%s}]}'
         % NINES),
        ("close-date-text.json", doc_bytes(deals=[{"id": "d", "closeDate": "9" * 5000}])),
    ],
)  # fmt: skip
def test_hostile_values_are_reviewed_with_the_batch_stored(
    member_client, django_capture_on_commit_callbacks, name, data
):
    with django_capture_on_commit_callbacks(execute=True):
        response = post(member_client, (name, data))

    assert response.status_code == 302
    batch = stored(data)
    assert batch.status == Batch.Status.ACCEPTED
    run = batch.runs.get()
    assert run.status == ReviewRun.Status.DONE
    assert run.findings.filter(kind="invalid_value").exists()


@pytest.mark.parametrize(
    ("name", "data", "error"),
    [
        ("dup.json", doc_bytes(deals=[{"id": "d\udc80"}, {"id": "d\udc80"}]),
         'deals[1].id: duplicate of deals[0] ("d\\udc80")'),
        ("exported.json", b'{"exportedAt":%s,"companies":[],"contacts":[],"deals":[]}' % NINES,
         'exportedAt: not a date: "99999'),
        ("exported-text.json", doc_bytes(exportedAt="1" * 5000), "exportedAt: not a date: "),
        ("header.csv", b"Record\x00 ID,Deal Name\n1,x\n", "header.csv: no Record ID column"),
        ("empty.csv", b"", "empty.csv: the file is empty (0 bytes)"),
    ],
)  # fmt: skip
def test_hostile_structure_answers_400_naming_it_with_the_batch_stored(
    member_client, name, data, error
):
    response = post(member_client, (name, data))

    assert response.status_code == 400
    batch = stored(data)
    assert batch.status == Batch.Status.REJECTED
    assert batch.errors[0].startswith(error)
    assert "Batch rejected" in response.content.decode()


def test_invalid_as_of_keeps_the_upload_with_the_reason(member_client):
    data = (DATA / "seed-example.json").read_bytes()

    response = post(member_client, ("seed.json", data), as_of="yesterday-ish")

    assert response.status_code == 400
    batch = stored(data)
    assert (batch.status, batch.errors) == (
        Batch.Status.REJECTED,
        ["as_of: Enter a valid date/time."],
    )


def test_a_1000_character_file_name_is_kept(member_client, django_capture_on_commit_callbacks):
    data = (DATA / "seed-example.json").read_bytes()
    with django_capture_on_commit_callbacks(execute=True):
        response = post(member_client, ("n" * 995 + ".json", data))

    assert response.status_code == 302
    batch = stored(data)
    assert batch.file_name.endswith(".json") and len(batch.file_name) <= 500
    assert batch.runs.get().status == ReviewRun.Status.DONE


@pytest.mark.parametrize("limit", [10, 1000])  # refused on the declared length / mid-body
def test_an_upload_over_the_limit_is_cut_off_with_413(member_client, settings, limit):
    settings.MAX_UPLOAD_BYTES = limit

    response = post(member_client, ("big.csv", b"Record ID,Deal Name\n" + b"1,x\n" * 600))

    assert response.status_code == 413
    assert f"the limit is {limit:,} bytes (MAX_UPLOAD_BYTES)" in response.content.decode()
    assert Batch.objects.count() == 0


def test_a_big_upload_is_streamed_and_parsed_by_the_worker(
    member_client, settings, django_capture_on_commit_callbacks
):
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 100  # spooled to a temporary file
    settings.PARSE_IN_WEB_MAX_BYTES = 100
    data = (DATA / "seed-example.json").read_bytes()

    with django_capture_on_commit_callbacks(execute=True):  # the tasks run eagerly
        response = post(member_client, ("seed.json", data))

    batch = stored(data)
    assert response.url == reverse("reviews:batch", args=[batch.pk])
    assert file_bytes(BatchFile.objects.get(batch=batch)) == data
    assert batch.status == Batch.Status.ACCEPTED
    run = batch.runs.get()
    assert run.status == ReviewRun.Status.DONE
    poll = member_client.get(response.url, headers={"HX-Request": "true"})
    assert poll["HX-Redirect"] == reverse("reviews:run", args=[run.pk])


def test_a_big_upload_waiting_for_a_worker_polls(member_client, settings):
    settings.PARSE_IN_WEB_MAX_BYTES = 100
    data = (DATA / "seed-example.json").read_bytes()

    response = post(member_client, ("seed.json", data))  # no commit: no worker saw it

    page = member_client.get(response.url).content.decode()
    assert "Being read" in page and 'hx-trigger="every 2s"' in page
    poll = member_client.get(response.url, headers={"HX-Request": "true"})
    assert "Being read" in poll.content.decode() and "<html" not in poll.content.decode()


@override_settings(DEBUG=False)
def test_a_request_error_is_logged_with_its_traceback(member_client, caplog, monkeypatch):
    from reviews.web import views

    def broken(*args, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(views, "filter_runs", broken)  # stands in for any unexpected failure
    member_client.raise_request_exception = False
    with caplog.at_level(logging.ERROR, logger="django.request"):
        response = member_client.get(reverse("reviews:runs"))

    assert response.status_code == 500
    (record,) = [r for r in caplog.records if r.name == "django.request"]
    # It reaches the settings' console handler, which prints it with the traceback.
    (console,) = [h for h in logging.getLogger().handlers if h.get_name() == "console"]
    assert not logging.getLogger("django").handlers  # none that print only under DEBUG
    assert console.filter(record)
    printed = console.format(record)
    assert "Traceback" in printed and "RuntimeError: the database went away" in printed


def test_a_crash_while_parsing_leaves_the_batch_rejected_not_half_done(member_client, monkeypatch):
    from reviews.engine import ingest

    def out_of_memory(data):
        raise MemoryError

    monkeypatch.setattr(ingest, "load_native", out_of_memory)  # stands in for any crash
    member_client.raise_request_exception = False
    data = (DATA / "seed-example.json").read_bytes()

    response = post(member_client, ("seed.json", data))

    assert response.status_code == 500
    batch = stored(data)
    assert (batch.status, batch.errors) == (
        Batch.Status.REJECTED,
        ["the upload could not be read (MemoryError); re-upload it"],
    )
