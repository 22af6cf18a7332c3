"""A task that runs out of memory or reaches its soft time limit ends what it worked on
`failed` (a batch rejected, an agent or a run failed), saying why: never left received
or running for the sweep to send again and again.

The soft limit here is Celery's own: billiard's handler (what a pool process runs when
the worker signals the limit) raising SoftTimeLimitExceeded from a timer's signal,
wherever the task is at that moment, including inside a query psycopg is waiting on.
The hard limit, which kills the process, is tested with a real worker
(test_task_limits_worker.py)."""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Callable
from contextlib import contextmanager
from datetime import timedelta

import pytest
from billiard.common import _shutdown_cleanup, clear_terminate_handler_fired
from billiard.pool import soft_timeout_sighandler
from celery.exceptions import SoftTimeLimitExceeded
from django.db import connection, transaction
from django.utils import timezone

from reviews.engine.specialists import NAMES
from reviews.models import AgentRun, Batch, Dataset, ReviewRun
from reviews.orchestration.intake import submit
from reviews.orchestration.intake.tasks import accept_upload
from reviews.orchestration.run import limits, runner, sweep
from reviews.orchestration.run.tasks import coordinate, run_specialist
from reviews.orchestration.store.parsed import forget_parsed
from revreview.celery import OutOfMemory
from tests.uploads import DATA, json_upload

SEED = json.loads((DATA / "seed-example.json").read_text())


def read_later(**fields) -> Batch:
    """A stored upload waiting for a worker to read it, as a big upload is."""
    return submit.store_upload([json_upload({**SEED, **fields})])


def not_sent_again(batch: Batch, settings) -> bool:
    settings.UNREAD_RESEND_SECONDS = 60
    Batch.objects.filter(pk=batch.pk).update(created_at=timezone.now() - timedelta(hours=1))
    return batch.pk not in {item["batch_id"] for item in sweep.sweep().unread}


@contextmanager
def handled_after(seconds: float, handler: Callable):
    """`handler` run by a signal after `seconds`, wherever this process is then."""
    previous = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def soft_time_limit(seconds: float):
    """The task's soft time limit, struck after `seconds` as a pool process has it."""
    return handled_after(seconds, soft_timeout_sighandler)


@contextmanager
def terminated(seconds: float):
    """The pool's terminate signal after `seconds`, handled as a pool process handles
    it (billiard's handler raises SystemExit): what a task at its hard time limit gets
    before the SIGKILL."""
    try:
        with handled_after(seconds, _shutdown_cleanup):
            yield
    finally:
        clear_terminate_handler_fired()


@contextmanager
def held_by_another_transaction(hold: Callable[[], object], seconds: float):
    """Another connection (a thread's) runs `hold` in a transaction and keeps what it
    locked for `seconds`, then rolls back: what needs it waits meanwhile."""
    holding, done = threading.Event(), threading.Event()

    def run() -> None:
        try:
            with transaction.atomic():
                hold()
                holding.set()
                done.wait(seconds)
                transaction.set_rollback(True)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    assert holding.wait(10)
    try:
        yield
    finally:
        done.set()
        thread.join()


def lock_table(name: str) -> Callable[[], None]:
    def hold() -> None:
        with connection.cursor() as cursor:
            cursor.execute(f"LOCK TABLE {name} IN ACCESS EXCLUSIVE MODE")

    return hold


@pytest.mark.django_db
def test_an_upload_out_of_memory_while_read_is_rejected_saying_so(monkeypatch, settings):
    batch = read_later()

    def out_of_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(submit, "parse", out_of_memory)  # as a 1M-record parse may
    # Not a MemoryError: Celery stops the whole worker on one (test_task_limits_worker).
    with pytest.raises(OutOfMemory):
        accept_upload.delay(batch_id=batch.pk, as_of=None, rate_keys=None)

    batch.refresh_from_db()
    assert (batch.status, batch.errors) == (
        Batch.Status.REJECTED,
        ["the upload could not be read: MemoryError: out of memory"],
    )
    assert not batch.runs.exists()
    assert not_sent_again(batch, settings)


@pytest.mark.django_db(transaction=True)
def test_the_soft_time_limit_mid_query_is_not_taken_for_a_database_away(postgres, settings):
    # The read waits on the dataset another transaction is making under the same name;
    # the soft limit strikes in that wait and leaves psycopg with a command in progress,
    # so what reaches the task is the database's error on the query the read made to
    # record its own failure, the limit behind it. The read rolled back, and before,
    # so did the batch's rejection: it was left received, for the sweep to send again.
    batch = read_later()
    workspace = batch.workspace_id
    making = lambda: Dataset.objects.create(workspace_id=workspace, name="acme")  # noqa: E731
    with held_by_another_transaction(making, seconds=3):
        with soft_time_limit(0.5), pytest.raises(Exception) as raised:
            accept_upload.delay(batch_id=batch.pk, as_of=None, rate_keys=None, dataset="acme")

    assert isinstance(limits.final_cause(raised.value), SoftTimeLimitExceeded)
    batch.refresh_from_db()
    assert batch.status == Batch.Status.REJECTED, batch.errors
    assert batch.errors == [
        "the upload could not be read: SoftTimeLimitExceeded: stopped at the task's soft "
        f"time limit ({settings.SPECIALIST_SOFT_TIME_LIMIT} s)"
    ]
    assert not Dataset.objects.filter(name="acme").exists()
    assert not_sent_again(batch, settings)


@pytest.mark.django_db(transaction=True)
def test_a_specialist_at_its_soft_limit_mid_query_fails_saying_so(postgres, settings):
    run = submit.submit([json_upload(SEED)], dispatch=False).run
    forget_parsed()  # as in a worker process that has not read this batch yet
    # The stored upload's bytes cannot be read while another transaction locks them:
    # the soft limit strikes while the specialist's process waits for them.
    with held_by_another_transaction(lock_table("reviews_batchfile"), seconds=3):
        with soft_time_limit(0.5):
            run_specialist.delay(run_id=run.pk, agent="dedup")

    dedup = AgentRun.objects.get(run=run, agent="dedup")
    assert dedup.status == AgentRun.Status.FAILED
    assert dedup.error == (
        "SoftTimeLimitExceeded: stopped at the task's soft time limit "
        f"({settings.SPECIALIST_SOFT_TIME_LIMIT} s)"
    )
    assert ReviewRun.objects.get(pk=run.pk).degraded


def test_what_a_limit_or_memory_error_was_raised_over_is_found():
    try:
        try:
            raise SoftTimeLimitExceeded()
        except SoftTimeLimitExceeded:
            raise ConnectionError("another command is already in progress") from None
    except ConnectionError as error:
        # `from None` hides the context from a traceback, not from final_cause
        assert isinstance(limits.final_cause(error), SoftTimeLimitExceeded)
    assert limits.final_cause(ValueError("a bug")) is None
    assert isinstance(limits.final_cause(OutOfMemory("x")), OutOfMemory)


@pytest.mark.django_db(transaction=True)
def test_a_coordinator_its_pool_ends_leaves_the_failure_to_the_kills_record(postgres):
    # At the hard time limit the pool process is sent SIGTERM, then SIGKILL. A SIGTERM
    # handled while the coordinator waits made it fail the run as "SystemExit(-242)"
    # (-241 for SIGTERM) before the worker's main process could record the time limit.
    run = submit.submit([json_upload(SEED)], dispatch=False).run
    assert runner.claim_run(run.pk)
    for name in NAMES:
        runner.run_specialist(run.pk, name)
    with held_by_another_transaction(lock_table("reviews_agentrun"), seconds=3):
        with terminated(0.5), pytest.raises(SystemExit):
            coordinate.delay(run_id=run.pk)

    run.refresh_from_db()
    assert run.status == ReviewRun.Status.RUNNING and not run.error
