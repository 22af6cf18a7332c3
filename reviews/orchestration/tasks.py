"""Celery tasks: thin wrappers that take ids and call reviews.orchestration.runner."""

from __future__ import annotations

import logging

from celery import chord, shared_task
from django.conf import settings

from reviews.engine.specialists import NAMES
from reviews.orchestration import runner

logger = logging.getLogger(__name__)


@shared_task(
    name="reviews.start_review",
    soft_time_limit=settings.SPECIALIST_SOFT_TIME_LIMIT,
    time_limit=settings.SPECIALIST_TIME_LIMIT,
)
def start_review(*, run_id: int) -> None:
    if not runner.claim_run(run_id):
        logger.info("run %s is gone or already under way", run_id)
        return
    header = [run_specialist.si(run_id=run_id, agent=name) for name in NAMES]
    body = coordinate.si(run_id=run_id)
    # A specialist killed at its hard time limit fails the chord, so the body never
    # runs; the errback coordinates anyway and the lost specialist counts as failed.
    chord(header)(
        body.on_error(coordinate_after_chord_error.si(run_id=run_id)),
        # Only for result backends without native chords (the embedded mode's files):
        # how often chord_unlock looks again (revreview/embedded_celery.py: the first look).
        interval=settings.CHORD_UNLOCK_SECONDS,
    )


@shared_task(
    name="reviews.run_specialist",
    soft_time_limit=settings.SPECIALIST_SOFT_TIME_LIMIT,
    time_limit=settings.SPECIALIST_TIME_LIMIT,
)
def run_specialist(*, run_id: int, agent: str) -> None:
    runner.run_specialist(run_id, agent)


@shared_task(
    name="reviews.coordinate",
    soft_time_limit=settings.COORDINATOR_SOFT_TIME_LIMIT,
    time_limit=settings.COORDINATOR_TIME_LIMIT,
)
def coordinate(*, run_id: int) -> None:
    try:
        runner.coordinate(run_id)
    except BaseException as error:
        runner.fail_run(run_id, error)
        raise


@shared_task(
    name="reviews.coordinate_after_chord_error",
    soft_time_limit=settings.COORDINATOR_SOFT_TIME_LIMIT,
    time_limit=settings.COORDINATOR_TIME_LIMIT,
)
def coordinate_after_chord_error(*, run_id: int) -> None:
    coordinate(run_id=run_id)


@shared_task(name="reviews.sweep_stuck_runs")
def sweep_stuck_runs() -> None:
    failed = runner.sweep_stuck_runs()
    if failed:
        logger.warning("failed stuck runs %s", failed)
