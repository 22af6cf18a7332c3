"""One intake (reviews.orchestration.intake.entry): it decides whether an upload is read
here, by a worker or kept in the spool; what the upload asked for stays on its batch
row, and the one accept message carries the batch id only, so whoever reads the batch
(a worker, the sweep's resend, a message queued before) reads it as it was asked."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.core.cache import cache
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from reviews.models import Batch, Dataset, ReviewRun
from reviews.orchestration.intake import entry
from reviews.orchestration.intake.submit import accept, accept_stored_upload, store_upload
from reviews.orchestration.intake.tasks import accept_upload
from reviews.orchestration.run import sweep
from tests.uploads import DATA, json_upload, upload

pytestmark = pytest.mark.django_db

SEED = json.loads((DATA / "seed-example.json").read_text())
ASKED = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)  # the seed's own exportedAt: 2026-08-01


def form_request(**asked) -> entry.Request:
    return entry.Request(channel="form", **asked)


def test_a_small_upload_is_read_here_and_a_big_one_by_a_worker(
    settings, django_capture_on_commit_callbacks
):
    settings.PARSE_IN_WEB_MAX_BYTES = len(upload("seed-example.json").data)

    small = entry.receive([upload("seed-example.json")], form_request())
    with django_capture_on_commit_callbacks() as sent:
        big = entry.receive([json_upload({**SEED, "padding": "x" * 100})], form_request())

    assert (small.route, small.batch.status, small.accepted) == ("here", "accepted", True)
    assert (big.route, big.batch.status, big.run) == ("worker", "received", None)
    assert len(sent) == 1  # the accept message, sent once the batch is committed


def test_an_upload_the_database_cannot_take_is_kept_in_the_spool(settings, tmp_path):
    settings.SPOOL_DIR = tmp_path / "spool"

    kept = entry.receive([upload("seed-example.json")], form_request(), offline="down")

    assert kept.route == "spool" and kept.batch is None
    assert [p.name for p in settings.SPOOL_DIR.iterdir()] == [kept.spool_id]
    assert not Batch.objects.exists()


def test_the_requested_as_of_stays_beside_the_effective_one():
    asked = entry.receive([upload("seed-example.json")], form_request(as_of=ASKED)).batch
    not_asked = entry.receive([upload("seed-example.json")], form_request()).batch

    asked.refresh_from_db()
    not_asked.refresh_from_db()
    assert (asked.requested_as_of, asked.as_of, asked.as_of_source) == (ASKED, ASKED, "given")
    exported = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)
    assert (not_asked.requested_as_of, not_asked.as_of) == (None, exported)
    assert not_asked.as_of_source == "exportedAt"


def test_a_big_upload_is_read_by_the_worker_as_it_was_asked(
    settings, django_capture_on_commit_callbacks
):
    settings.PARSE_IN_WEB_MAX_BYTES = 100
    asked = form_request(as_of=ASKED, dataset=" acme-crm ", rate_keys=["ip:203.0.113.9"])

    with django_capture_on_commit_callbacks(execute=True):  # the worker, eager here
        batch = entry.receive([upload("seed-example.json")], asked).batch
        assert batch.rate_keys == ["ip:203.0.113.9"]  # kept on the row until it is read

    batch.refresh_from_db()
    assert (batch.status, batch.as_of, batch.as_of_source) == ("accepted", ASKED, "given")
    assert (batch.dataset.name, batch.requested_dataset) == ("acme-crm", "acme-crm")
    assert batch.rate_keys is None  # the request is answered: its keys are not kept
    assert batch.runs.get().status == ReviewRun.Status.DONE


def test_the_accept_message_is_the_batch_id_only(settings, django_capture_on_commit_callbacks):
    settings.PARSE_IN_WEB_MAX_BYTES = 100
    settings.UNREAD_RESEND_SECONDS = 60
    with django_capture_on_commit_callbacks() as sent:
        batch = entry.receive([upload("seed-example.json")], form_request(as_of=ASKED)).batch
    Batch.objects.filter(pk=batch.pk).update(created_at=timezone.now() - timedelta(seconds=61))

    assert sweep.sweep().unread == [{"batch_id": batch.pk}]
    assert len(sent) == 1


def test_a_batch_parsed_but_never_served_is_read_again_as_it_was_asked(settings):
    """Accepted, then the database went away before its run was made: the sweep's resend
    reads it with what the upload asked (nothing here), never with the effective as-of
    the first read found (which would make it a 'given' one)."""
    settings.UNREAD_RESEND_SECONDS = 60
    batch = store_upload([upload("seed-example.json")])
    accept(batch)
    Batch.objects.filter(pk=batch.pk).update(created_at=timezone.now() - timedelta(seconds=61))
    (message,) = sweep.sweep().unread

    accept_upload.apply(kwargs=message)

    batch.refresh_from_db()
    assert (batch.as_of_source, batch.requested_as_of) == ("exportedAt", None)
    assert batch.runs.count() == 1


def test_a_message_queued_before_batches_kept_their_request_is_read_with_it():
    batch = store_upload([upload("seed-example.json")])
    old = {"batch_id": batch.pk, "as_of": ASKED.isoformat(), "dataset": "legacy-crm",
           "rate_keys": None, "client_ip": "203.0.113.9"}  # fmt: skip

    accept_upload.apply(kwargs=old)

    batch.refresh_from_db()
    assert (batch.status, batch.as_of, batch.as_of_source) == ("accepted", ASKED, "given")
    assert batch.dataset == Dataset.objects.get(workspace=batch.workspace, name="legacy-crm")
    assert batch.runs.count() == 1


def test_the_worker_counts_the_request_with_the_keys_kept_on_its_batch(settings):
    settings.RATE_LIMIT_PER_HOUR = 1  # the second request is served by failback, the third refused
    cache.clear()  # counters and served reviews an earlier test of this process left
    keys = ["user:9001", "ip:203.0.113.77"]
    batches = [store_upload([upload("seed-example.json")], rate_keys=keys) for _ in range(3)]

    for batch in batches:
        accept_stored_upload(batch.pk)

    modes = [
        ReviewRun.objects.filter(batch=b).values_list("mode", flat=True).first() for b in batches
    ]
    assert modes == [ReviewRun.Mode.FRESH, ReviewRun.Mode.FAILBACK, None]
    refused = Batch.objects.get(pk=batches[2].pk)
    assert refused.errors[0].startswith("refused: ") and refused.rate_keys is None


def test_a_dataset_name_that_cannot_be_one_refuses_the_upload_before_it_is_read(
    settings, django_capture_on_commit_callbacks
):
    settings.PARSE_IN_WEB_MAX_BYTES = 100
    with django_capture_on_commit_callbacks() as sent:
        taken = entry.receive([upload("seed-example.json")], form_request(dataset="x" * 201))

    assert (taken.route, taken.batch.status) == ("here", "rejected")
    assert taken.errors == ["dataset: name is 201 characters; at most 200"]
    assert sent == []  # no worker is asked to read it
    assert not Dataset.objects.exists()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_existing_batches_keep_what_they_asked_for_when_the_database_migrates():
    executor = MigrationExecutor(connection)
    executor.migrate([("reviews", "0015_record_ids_index_postgres_only")])
    executor.loader.build_graph()
    old = executor.loader.project_state(("reviews", "0015_record_ids_index_postgres_only")).apps
    OldBatch, OldDataset = old.get_model("reviews", "Batch"), old.get_model("reviews", "Dataset")
    crm = OldDataset.objects.create(name="crm")
    row = {"file_name": "b.json", "sha256": "x", "size_bytes": 1}
    waiting = OldBatch.objects.create(**row, status="received", as_of=ASKED, dataset=crm)
    given = OldBatch.objects.create(**row, status="accepted", as_of=ASKED, as_of_source="given")
    found = OldBatch.objects.create(**row, status="accepted", as_of=ASKED, as_of_source="upload")

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    asked = {
        b.pk: (b.requested_as_of, b.requested_dataset)
        for b in Batch.objects.filter(pk__in=[waiting.pk, given.pk, found.pk])
    }
    assert asked == {waiting.pk: (ASKED, "crm"), given.pk: (ASKED, ""), found.pk: (None, "")}
