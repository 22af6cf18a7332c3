"""A real worker, as deployed (prefork, concurrency 2), whose tasks reach their hard time
limit or run out of memory. A task killed at its hard limit cannot record anything
itself: the worker's main process reports it, and what it worked on is failed at once,
saying so (reviews.orchestration.run.tasks.task_killed), instead of being left received
for the sweep to send again and again, or running until the heartbeat sweep has sent
it RUN_RETRY_LIMIT more times. A read whose process the kernel kills is read again at
most RUN_RETRY_LIMIT times, then its batch is rejected. A task that raises MemoryError
fails that task, not the worker.

Each task is held where it waits on the database, by a row another transaction locks,
until its limit (5 s here) kills it; the lock is let go once the worker reports the kill."""

from __future__ import annotations

import json
import re
import time
from functools import partial
from pathlib import Path

import psutil
import pytest

from reviews.models import AgentRun, Batch, ReviewRun
from reviews.orchestration.intake.submit import store_upload, submit
from reviews.orchestration.run.tasks import ACCEPT_UPLOAD
from revreview.celery import app
from tests import services
from tests.orchestration.out_of_memory_task import OUT_OF_MEMORY
from tests.orchestration.test_task_limits import held_by_another_transaction
from tests.orchestration.test_worker_recovery import private_redis, tail, worker_env
from tests.uploads import DATA, json_upload

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def through_the_broker():
    app.conf.task_always_eager = False
    yield
    app.conf.task_always_eager = True


LIMIT = 5  # seconds: every review task's hard limit
# No soft limit (0): the pool would raise SoftTimeLimitExceeded in the wait first, and
# the task record its own failure (test_task_limits.py). Here nothing in the task can:
# as when the limit strikes in compiled code that does not return to Python in time.
LIMITS = {
    "SPECIALIST_TIME_LIMIT": str(LIMIT),
    "SPECIALIST_SOFT_TIME_LIMIT": "0",
    "COORDINATOR_TIME_LIMIT": str(LIMIT),
    "COORDINATOR_SOFT_TIME_LIMIT": "0",
    "RUN_RETRY_LIMIT": "0",
}
KILLED = f"TimeLimitExceeded: its process was killed at the task's time limit ({LIMIT} s)"
SEED = json.loads((DATA / "seed-example.json").read_text())
FULL = json.loads((services.ROOT / "samples" / "full.json").read_text())


def locked_row(model, **where):
    return lambda: list(model.objects.select_for_update().filter(**where))


def wait_until(check, seconds: float, log: Path, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if result := check():
            return result
        time.sleep(0.3)
    pytest.fail(f"{what} not within {seconds:.0f} s:\n{pool_state()}\n{tail(log)}")


def pool_state() -> str:
    """What each of this test's worker processes is doing, for a failure to show."""
    lines = []
    for process in psutil.Process().children(recursive=True):
        try:
            lines.append(f"{process.pid} {process.status()} {' '.join(process.cmdline())[:80]}")
        except psutil.Error:
            continue
    return "processes:\n" + "\n".join(lines)


def killed(log: Path, task: str, times: int = 1):
    """Wait for the worker's report of `times` kills of `task` at its hard limit."""
    pattern = rf"Hard time limit \({LIMIT}(\.0)?s\) exceeded for {re.escape(task)}\["
    return lambda: len(re.findall(pattern, log.read_text(errors="replace"))) >= times


def test_tasks_at_their_hard_limit_fail_what_they_held_and_memory_fails_only_its_task(
    postgres, tmp_path
):
    log = tmp_path / "worker.log"
    args = [*services.WORKER_ARGS, "--include", "tests.orchestration.out_of_memory_task"]
    # A Redis of this test's own: a worker of another test on the shared one would take
    # tasks it cannot run (the out-of-memory one) or whose rows it cannot see.
    with private_redis(tmp_path) as redis_server:
        env = worker_env(redis_server.url, tmp_path, **LIMITS)
        with (
            app.connection_for_write(redis_server.url) as broker,
            services.celery_worker(env, args, log) as worker,
        ):
            # Without limits of the sender's: Celery (5.7) puts a task's own time limits
            # in the message when the sending process has the task registered (another
            # test imported it), and this process's are the defaults (330 s), not the
            # worker's 5 s. The worker's own limits are what is tested.
            send = partial(app.send_task, connection=broker, time_limit=None, soft_time_limit=None)
            run = scenarios(send, log, worker.pid)
            assert worker.poll() is None, tail(log)

    assert run.error == f"its coordinator: {KILLED}"
    agents = dict(run.agents.values_list("agent", "status"))
    assert agents == {
        "dedup": "failed",
        "attribution": "done",
        "pipeline": "done",
        "freshness": "done",
        AgentRun.COORDINATOR: "running",  # the run is failed: nothing waits for it
    }
    assert run.agents.get(agent="dedup").error == KILLED
    assert "Unrecoverable error" not in tail(log)


def scenarios(send, log: Path, worker_pid: int) -> ReviewRun:
    # A big upload's read, killed while it waits on its batch.
    batch = store_upload([json_upload(SEED)])
    with held_by_another_transaction(locked_row(Batch, pk=batch.pk), seconds=120):
        send(ACCEPT_UPLOAD, kwargs={"batch_id": batch.pk, "as_of": None, "rate_keys": None})
        wait_until(killed(log, ACCEPT_UPLOAD), 60, log, "the read's kill")
    batch = wait_until(rejected(batch), 30, log, "the batch rejected")
    assert batch.errors == [f"the upload could not be read: {KILLED}"]

    # A read whose process the kernel kills (as its OOM killer does a process that holds
    # too much), past its retries (RUN_RETRY_LIMIT, 0 here): it was given back to the
    # queue and read again, and killed again, for ever.
    batch = store_upload([json_upload(SEED)])
    with held_by_another_transaction(locked_row(Batch, pk=batch.pk), seconds=120):
        send(ACCEPT_UPLOAD, kwargs={"batch_id": batch.pk, "as_of": None, "rate_keys": None})
        wait_until(received(log, ACCEPT_UPLOAD, 2), 60, log, "the read")
        time.sleep(1)  # under way, waiting on its batch
        for process in psutil.Process(worker_pid).children():  # the pool's processes
            process.kill()
        wait_until(lambda: "WorkerLostError" in log.read_text(), 60, log, "the loss")
    batch = wait_until(rejected(batch), 30, log, "the batch rejected")
    assert batch.errors == [
        "the upload could not be read: WorkerLostError: its process died under it "
        "(Worker exited prematurely: signal 9 (SIGKILL)); out of memory?"
    ]

    # A run's start, killed while it waits on its run.
    run = submit([json_upload(SEED)], dispatch=False).run
    with held_by_another_transaction(locked_row(ReviewRun, pk=run.pk), seconds=120):
        send("reviews.start_review", kwargs={"run_id": run.pk})
        wait_until(killed(log, "reviews.start_review"), 60, log, "the start's kill")
    run = wait_until(failed(run), 30, log, "the run failed")
    assert run.error == f"its start: {KILLED}"

    # A specialist, then the coordinator, each killed while it waits on its own row.
    run = submit([json_upload(FULL)], dispatch=False).run
    coordinator = locked_row(AgentRun, run=run, agent=AgentRun.COORDINATOR)
    with held_by_another_transaction(coordinator, seconds=120):
        dedup = locked_row(AgentRun, run=run, agent="dedup")
        with held_by_another_transaction(dedup, seconds=120):
            send("reviews.start_review", kwargs={"run_id": run.pk})
            wait_until(killed(log, "reviews.run_specialist"), 60, log, "dedup's kill")
        wait_until(killed(log, "reviews.coordinate"), 60, log, "the coordinator's kill")
    run = wait_until(failed(run), 30, log, "the run failed")

    # Out of memory: Celery stopped the whole worker on it ("Unrecoverable error").
    send(OUT_OF_MEMORY, kwargs={})
    wait_until(lambda: "OutOfMemory" in log.read_text(), 120, log, "the task's failure")
    return run


def rejected(batch: Batch):
    return lambda: Batch.objects.filter(pk=batch.pk, status="rejected").first()


def received(log: Path, task: str, times: int):
    pattern = rf"Task {re.escape(task)}\[[^\]]+\] received"
    return lambda: len(re.findall(pattern, log.read_text(errors="replace"))) >= times


def failed(run: ReviewRun):
    return lambda: ReviewRun.objects.filter(pk=run.pk, status="failed").first()
