"""A task that runs out of memory, for a real worker to run: the worker imports this
module with `--include` (tests/orchestration/test_task_limits_worker.py)."""

from __future__ import annotations

from celery import shared_task

OUT_OF_MEMORY = "tests.run_out_of_memory"


@shared_task(name=OUT_OF_MEMORY)
def run_out_of_memory() -> None:
    raise MemoryError("the test's batch would not fit")
