"""What ends a task for good: its time limit, the memory it needed, or its process
killed under it. Named here, for the run, the agent or the batch it failed, in words a
person reads on the run page, the batch page and in the API.

A Celery task has two limits (the settings SPECIALIST_SOFT_TIME_LIMIT / _TIME_LIMIT
and COORDINATOR_...): at the soft one the task's process raises SoftTimeLimitExceeded
inside the work, and the task records its own failure; at the hard one the worker's
main process kills the task's process, so nothing in it can record anything
(reviews.orchestration.run.tasks.task_killed does, from the main process's report).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from celery import current_task
from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded, WorkerLostError
from django.db import DatabaseError, connection

from revreview.celery import OutOfMemory

T = TypeVar("T")

# Exceptions that end a task the same way whenever it runs again: recorded as the
# task's failure, never left for a retry.
FINAL = (SoftTimeLimitExceeded, TimeLimitExceeded, MemoryError, OutOfMemory)


def reason(error: BaseException) -> str | None:
    """The failure in words, or None for any other error (the caller names it)."""
    if isinstance(error, SoftTimeLimitExceeded):
        seconds = getattr(current_task, "soft_time_limit", None)
        limit = f" ({seconds:g} s)" if seconds else ""
        return f"SoftTimeLimitExceeded: stopped at the task's soft time limit{limit}"
    if isinstance(error, TimeLimitExceeded):
        seconds = error.args[0] if error.args else None
        limit = f" ({seconds:g} s)" if isinstance(seconds, int | float) else ""
        return f"TimeLimitExceeded: its process was killed at the task's time limit{limit}"
    if isinstance(error, MemoryError | OutOfMemory):
        detail = str(error).removeprefix("MemoryError").strip(": ")
        return "MemoryError: out of memory" + (f" ({detail})" if detail else "")
    if isinstance(error, WorkerLostError):
        # "Worker exited prematurely: signal 9 (SIGKILL) Job: 3.": the job's number is
        # the pool's, of no use on a batch or a run.
        how = str(error).split(" Job:")[0].rstrip(".")
        return f"WorkerLostError: its process died under it ({how}); out of memory?"
    return None


def final_cause(error: BaseException) -> BaseException | None:
    """The limit or memory error behind `error`, itself or what it was raised while
    handling. The soft limit striking mid-query leaves the connection with a command in
    progress, so what reaches the task is often the database's error on the next query
    (which would read as "unreachable, retry"), raised while handling the limit."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, FINAL):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def recorded(write: Callable[[], T]) -> T:
    """Run `write`, which records a failure; if the failure left the connection unusable
    (see final_cause), once more on a fresh one, so the record is never lost with it."""
    try:
        return write()
    except DatabaseError:
        if connection.in_atomic_block:  # not ours to close
            raise
        connection.close()
        return write()
