"""A running agent's heartbeat: proof, in its AgentRun row, that its worker is alive.

A detector or a model call holds the task's thread for seconds to minutes, so the beat
comes from a thread of its own, every HEARTBEAT_SECONDS while the work runs. A worker
killed mid-run (SIGKILL, OOM, a lost machine) stops beating, and the sweep
(reviews.orchestration.run.sweep) sends the agent's work again instead of waiting for the
broker's visibility timeout.

The row is the one the claim set to RUNNING; a beat touches it only while it is still
RUNNING, so a late beat never revives an agent the sweep has taken back.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import connection
from django.utils import timezone

from reviews.models import AgentRun

logger = logging.getLogger(__name__)


def beat(run_id: int, agent: str) -> bool:
    """One beat; False if the agent is no longer running (finished, or taken back)."""
    return bool(
        AgentRun.objects.filter(run_id=run_id, agent=agent, status=AgentRun.Status.RUNNING).update(
            heartbeat_at=timezone.now()
        )
    )


@contextmanager
def beating(run_id: int, agent: str, interval: float | None = None) -> Iterator[None]:
    """Beat for (run_id, agent) in a background thread while the block runs."""
    seconds = float(settings.HEARTBEAT_SECONDS if interval is None else interval)
    stop = threading.Event()

    def loop() -> None:
        try:
            while not stop.wait(seconds):
                try:
                    if not beat(run_id, agent):
                        return
                except Exception:  # a database hiccup: try again at the next beat
                    logger.warning("run %s: %s missed a heartbeat", run_id, agent, exc_info=True)
                    connection.close()
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=loop, name=f"heartbeat-{run_id}-{agent}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
