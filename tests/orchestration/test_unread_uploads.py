"""No upload stranded: a stored batch is read once, whatever happens to the database
or the messages. A real worker reaches the database through a proxy the test cuts
while the batch waits to be read: the read fails, is retried, and the batch is reviewed
once the database is back; sent again (as the sweep does), it is not reviewed twice."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from reviews.models import Batch, ReviewRun
from reviews.orchestration.intake.submit import accept_stored_upload, store_upload
from reviews.orchestration.run import sweep
from reviews.orchestration.store.unread import ACCEPT_UPLOAD, accept_message
from revreview.celery import app
from tests import services
from tests.orchestration.test_worker_recovery import tail, worker_env
from tests.tcp_proxy import TcpProxy
from tests.uploads import DATA, json_upload

SEED = json.loads((DATA / "seed-example.json").read_text())


def stored_batch() -> Batch:
    return store_upload([json_upload(SEED)])


@pytest.mark.django_db
def test_a_batch_read_twice_is_reviewed_once():
    batch = stored_batch()

    first = accept_stored_upload(batch.pk)
    second = accept_stored_upload(batch.pk)

    assert first is not None and first.accepted
    assert second is None
    assert ReviewRun.objects.filter(batch=batch).count() == 1


@pytest.mark.django_db
def test_the_sweep_sends_a_batch_left_unread_again(settings):
    settings.UNREAD_RESEND_SECONDS = 60
    unread, read, recent = stored_batch(), stored_batch(), stored_batch()
    accept_stored_upload(read.pk)
    old = timezone.now() - timedelta(seconds=61)
    Batch.objects.filter(pk__in=[unread.pk, read.pk]).update(created_at=old)
    # accepted, then the database went away before its run was made: unread still
    half = stored_batch()
    Batch.objects.filter(pk=half.pk).update(status=Batch.Status.ACCEPTED, created_at=old)

    plan = sweep.sweep()

    assert sorted(item["batch_id"] for item in plan.unread) == [unread.pk, half.pk]
    assert recent.pk not in {item["batch_id"] for item in plan.unread}


def logged(log, text: str, seconds: float) -> None:
    """Wait for `text` in the worker's log (a loaded machine starts it slowly)."""
    deadline = time.monotonic() + seconds
    while text not in tail(log) and time.monotonic() < deadline:
        time.sleep(0.2)


@pytest.fixture
def proxy():
    db = connection.settings_dict
    proxy = TcpProxy((db["HOST"], int(db["PORT"]))).start()
    yield proxy
    proxy.cut()


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_database_cut_while_a_worker_reads_an_upload_leaves_it_reviewed_once(
    postgres, redis_url, proxy, tmp_path
):
    db = connection.settings_dict
    login = f"{db['USER']}:{db['PASSWORD']}" if db["PASSWORD"] else db["USER"]
    env = worker_env(redis_url, tmp_path)
    env["DATABASE_URL"] = f"postgres://{login}@127.0.0.1:{proxy.port}/{db['NAME']}"
    log = tmp_path / "worker.log"
    batch = stored_batch()
    app.conf.task_always_eager = False
    try:
        with services.celery_worker(env, log=log) as worker:
            logged(log, "ready", 60)  # up, its connections made
            proxy.cut()
            app.send_task(ACCEPT_UPLOAD, kwargs=accept_message(batch.pk))
            logged(log, "retrying", 60)  # the read fails and is retried meanwhile
            batch.refresh_from_db()
            assert batch.status == Batch.Status.RECEIVED
            assert "retrying" in tail(log), tail(log)
            proxy.restore()
            run = finished(batch, 90, log)
            # Sent again, as the sweep would: read already, not reviewed twice.
            app.send_task(ACCEPT_UPLOAD, kwargs=accept_message(batch.pk))
            time.sleep(4)
            assert worker.poll() is None
    finally:
        app.conf.task_always_eager = True
    assert run.status == ReviewRun.Status.DONE
    assert ReviewRun.objects.filter(batch=batch).count() == 1
    batch.refresh_from_db()
    assert batch.status == Batch.Status.ACCEPTED


def finished(batch: Batch, seconds: float, log) -> ReviewRun:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        run = ReviewRun.objects.filter(batch=batch).first()
        if run is not None and run.is_finished:
            return run
        time.sleep(0.5)
    pytest.fail(f"batch {batch.pk} not reviewed in {seconds:.0f} s:\n{tail(log)}")
