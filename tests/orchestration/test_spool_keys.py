"""An Idempotency-Key sent with an API upload that was kept in the spool (the database was
down) travels with it: a retry with the key gets the same spool id while it waits, its
import claims the key for the batch it stores, and a retry after that gets the batch.
Never a second batch, whichever order the retry and the import come in.

The outage is the one of test_spool: every statement fails from the store step's first
INSERT on, until the block ends."""

from __future__ import annotations

import shutil

import pytest
from django.urls import reverse

from reviews.apiauth.models import IdempotencyKey
from reviews.apiauth.tokens import create_token
from reviews.models import Batch, ReviewRun
from reviews.orchestration.intake.spool_import import import_spool
from reviews.orchestration.store import spool
from reviews.orchestration.store.blob_store import file_bytes
from reviews.web.uploads import SPOOLED
from tests.orchestration.test_spool import SEED, database_down, only_folder
from tests.orchestration.test_spool import spool_dir as spool_dir  # a fixture

pytestmark = pytest.mark.django_db(transaction=True)

OTHER = b'{"companies": [], "contacts": [], "deals": []}'


@pytest.fixture
def robot(django_user_model):
    return django_user_model.objects.create_user("robot", password="robot-pass-123")


@pytest.fixture
def send(client, robot):
    secret = create_token(robot, "nightly export").secret

    def send(data: bytes = SEED, key: str = "night-1"):
        return client.post(
            reverse("api:batches") + "?dataset=acme-crm",
            data=data,
            content_type="application/json",
            headers={"Authorization": f"Bearer {secret}", "Idempotency-Key": key},
        )

    return send


def spooled_once(send, spool_dir) -> str:
    """Send the upload while the database is down; its spool id."""
    with database_down():
        first = send()
    assert first.status_code == 503, first.content
    folder = only_folder(spool_dir)
    assert first.json() == {"detail": SPOOLED, "spool_id": folder.name}
    assert spool.read_meta(folder)["idempotency_key"] == "night-1"
    return folder.name


def assert_replayed(answer, batch: Batch) -> None:
    assert answer.status_code == 202, answer.content
    assert answer["Idempotent-Replayed"] == "true"
    assert answer.json()["batch_id"] == batch.pk
    assert answer.json()["run_id"] == batch.runs.get().pk


def test_a_retry_while_the_database_is_still_down_gets_the_same_spool_id(send, spool_dir):
    spool_id = spooled_once(send, spool_dir)

    with database_down(from_start=True):  # the token is known from the cache only
        again = send()

    assert again.status_code == 503
    assert again.json() == {"detail": SPOOLED, "spool_id": spool_id}
    assert again["Retry-After"] == "60"
    assert again["Idempotent-Replayed"] == "true"
    assert [p.name for p in spool.pending()] == [spool_id]  # not kept twice

    ((_, batch_id),) = import_spool().imported

    batch = Batch.objects.get()
    assert batch.pk == batch_id and file_bytes(batch.files.get()) == SEED
    assert_replayed(send(), batch)  # and after the import: the batch, not a second one
    assert Batch.objects.count() == 1


def test_a_retry_once_the_database_is_back_before_the_import_gets_the_spool_id(
    send, spool_dir, robot
):
    spool_id = spooled_once(send, spool_dir)

    again = send()  # the database answers; the spool is not imported yet

    assert (again.status_code, again.json()["spool_id"]) == (503, spool_id)
    assert not Batch.objects.exists()

    import_spool()

    batch = Batch.objects.get()
    # The import claimed the key for the batch it stored.
    assert IdempotencyKey.objects.get(user=robot, key="night-1").batch == batch
    assert batch.runs.get().status == ReviewRun.Status.DONE
    assert_replayed(send(), batch)
    assert Batch.objects.count() == 1


def test_the_import_claims_the_key_when_no_request_could(send, spool_dir, robot):
    spooled_once(send, spool_dir)
    IdempotencyKey.objects.all().delete()  # as if released before the database went away

    import_spool()

    batch = Batch.objects.get()
    assert IdempotencyKey.objects.get(user=robot, key="night-1").batch == batch
    assert_replayed(send(), batch)
    assert Batch.objects.count() == 1


def test_an_import_run_again_stores_nothing_twice(send, spool_dir, tmp_path):
    spool_id = spooled_once(send, spool_dir)
    # An importer stopped after its commit, before it removed the folder: the folder is back.
    shutil.copytree(spool_dir / spool_id, tmp_path / spool_id)
    import_spool()
    shutil.copytree(tmp_path / spool_id, spool_dir / spool_id)

    report = import_spool()

    batch = Batch.objects.get()
    assert report.imported == [(spool_id, batch.pk)]
    assert batch.runs.count() == 1  # not reviewed again either
    assert not (spool_dir / spool_id).exists()


def test_the_key_sent_with_another_upload_while_one_waits_is_refused(send, spool_dir):
    spool_id = spooled_once(send, spool_dir)

    with database_down(from_start=True):
        refused_down = send(OTHER)
    refused_up = send(OTHER)

    for answer in (refused_down, refused_up):
        assert answer.status_code == 422, answer.content
        assert answer.json()["detail"] == "this Idempotency-Key was used for a different upload"
    assert [p.name for p in spool.pending()] == [spool_id]
    # Another key is another upload: kept.
    with database_down():
        assert send(OTHER, key="night-2").status_code == 503
    assert len(spool.pending()) == 2


def test_a_big_upload_retried_while_it_waits_gets_the_same_spool_id(send, spool_dir, settings):
    settings.PARSE_IN_WEB_MAX_BYTES = 100  # stored streamed, for a worker to parse
    spool_id = spooled_once(send, spool_dir)

    again = send()

    assert (again.status_code, again.json()["spool_id"]) == (503, spool_id)
    ((_, batch_id),) = import_spool().imported
    answer = send()
    assert answer.status_code == 202 and answer.json()["batch_id"] == batch_id
    assert Batch.objects.count() == 1
