"""Celery tasks: thin wrappers that take ids and call reviews.orchestration.run.runner
(and .coordination).

No chord: its counter lives in the result backend, so a lost specialist (a killed
worker) or a Redis restart would leave the coordinator waiting for ever. Instead the
last specialist to finish sends the coordinator, and the sweep (every
SWEEP_INTERVAL_SECONDS, on its own queue) sends again whatever a dead worker or a lost
message left behind (reviews.orchestration.run.sweep)."""

from __future__ import annotations

import logging

from celery import current_app, group, shared_task
from celery.exceptions import TimeLimitExceeded, WorkerLostError
from celery.signals import task_failure
from django.conf import settings
from django.utils import timezone
from kombu.exceptions import OperationalError

from alerts.tasks import deliver_webhook
from reviews.engine.specialists import NAMES
from reviews.models import ReviewRun
from reviews.orchestration.run import coordination, limits, runner
from reviews.orchestration.run import sweep as sweeper
from reviews.orchestration.store import unread
from reviews.orchestration.store.unread import ACCEPT_UPLOAD

logger = logging.getLogger(__name__)


@shared_task(
    name="reviews.start_review",
    soft_time_limit=settings.SPECIALIST_SOFT_TIME_LIMIT,
    time_limit=settings.SPECIALIST_TIME_LIMIT,
)
def start_review(*, run_id: int) -> None:
    try:
        if not runner.claim_run(run_id):
            logger.info("run %s is gone or already under way", run_id)
            return
        group(run_specialist.si(run_id=run_id, agent=name) for name in NAMES).apply_async()
    except limits.FINAL as error:  # would strike again: the run fails, saying why
        runner.fail_run(run_id, f"its start: {limits.reason(error)}")
        raise


@shared_task(
    name="reviews.run_specialist",
    soft_time_limit=settings.SPECIALIST_SOFT_TIME_LIMIT,
    time_limit=settings.SPECIALIST_TIME_LIMIT,
)
def run_specialist(*, run_id: int, agent: str) -> None:
    if runner.run_specialist(run_id, agent):
        # If this send fails (the broker is away), the sweep sends it later.
        coordinate.delay(run_id=run_id)


@shared_task(
    name="reviews.coordinate",
    soft_time_limit=settings.COORDINATOR_SOFT_TIME_LIMIT,
    time_limit=settings.COORDINATOR_TIME_LIMIT,
)
def coordinate(*, run_id: int) -> None:
    try:
        coordination.coordinate(run_id)
    except SystemExit:
        # The pool ending this process: at the hard time limit it is sent SIGTERM before
        # SIGKILL, and billiard's handler raises this. The worker's main process records
        # the kill (task_killed); a SystemExit recorded here would read "SystemExit(-241)".
        raise
    except BaseException as error:
        why = limits.reason(error)
        runner.fail_run(run_id, f"its coordinator: {why}" if why else error)
        raise


def send_start(run_id: int) -> bool:
    """Send a queued run to the workers and note that the broker has it. A broker that
    is down is logged, not raised: the run stays queued with no dispatched_at, and the
    sweep sends it again."""
    try:
        start_review.delay(run_id=run_id)
    except OperationalError as error:
        logger.error("run %s: could not reach the broker (%r); the sweep will retry", run_id, error)
        return False
    ReviewRun.objects.filter(pk=run_id).update(dispatched_at=timezone.now())
    return True


IMPORT_SPOOL = "reviews.import_spool"  # reviews.orchestration.intake.tasks.import_spool


# --- a task killed at its hard time limit --------------------------------------------
# The pool process is killed, so nothing in it records the failure: the worker's main
# process reports it (task_failure, with the task's kwargs), and task_killed records it.
# Not in the main process itself: it reports before the kill, while the process still
# holds the rows' locks, and a write there would wait on them with the whole worker.
KILLED = (TimeLimitExceeded, WorkerLostError)  # a worker lost past its retries, too
RECORDED_WHEN_KILLED = {
    ACCEPT_UPLOAD,
    "reviews.start_review",
    "reviews.run_specialist",
    "reviews.coordinate",
}
_reported: dict[str, None] = {}  # task ids: Celery reports one kill twice


@task_failure.connect
def _report_killed(sender=None, task_id=None, exception=None, kwargs=None, **rest) -> None:
    name = getattr(sender, "name", "")
    if not isinstance(exception, KILLED) or name not in RECORDED_WHEN_KILLED:
        return
    if task_id in _reported:
        return
    _reported[task_id] = None
    while len(_reported) > 100:
        del _reported[next(iter(_reported))]
    why = limits.reason(exception)
    logger.error("task %s[%s] %s: recording its failure", name, task_id, why)
    try:
        task_killed.delay(task=name, kwargs=dict(kwargs or {}), why=why)
    except OperationalError:  # the sweep brings it back, or gives up on it, later
        logger.exception("could not send the failure of task %s[%s]", name, task_id)


@shared_task(name="reviews.task_killed", soft_time_limit=60, time_limit=90)
def task_killed(*, task: str, kwargs: dict, why: str) -> None:
    """Record the failure of a task whose process was killed (its hard time limit): the
    batch it was reading rejected, the specialist failed (the run finishes degraded),
    the run it started or coordinated failed. Each only if still unfinished."""
    run_id = kwargs.get("run_id")
    if task == ACCEPT_UPLOAD:
        unread.give_up(kwargs["batch_id"], why)
    elif task == "reviews.run_specialist":
        runner.fail_agent(run_id, kwargs["agent"], why)
        if runner.specialists_finished(run_id):
            coordinate.delay(run_id=run_id)
    else:
        what = "its start" if task == "reviews.start_review" else "its coordinator"
        runner.fail_run(run_id, f"{what}: {why}")


@shared_task(name="reviews.sweep", soft_time_limit=60, time_limit=90)
def sweep() -> None:
    plan = sweeper.sweep()
    for run_id in plan.start:
        send_start(run_id)
    for run_id, agent in plan.specialists:
        run_specialist.delay(run_id=run_id, agent=agent)
    for run_id in plan.coordinate:
        coordinate.delay(run_id=run_id)
    for message in plan.unread:
        # By name, as the spool import below (reviews.orchestration.intake.tasks).
        current_app.send_task(ACCEPT_UPLOAD, kwargs=message)
    if plan.spooled:
        # By name: the import task stores uploads through submit, which imports this
        # module (reviews.orchestration.intake.tasks). A copy sent while one runs skips
        # the uploads the first one holds (spool.claimed).
        current_app.send_task(IMPORT_SPOOL, expires=float(settings.SWEEP_INTERVAL_SECONDS))
    if not plan.empty:
        logger.warning(
            "sweep: sent again %s start(s), %s specialist(s), %s coordinator(s); gave up on %s",
            len(plan.start),
            len(plan.specialists),
            len(plan.coordinate),
            ", ".join(plan.failed) or "none",
        )


@shared_task(name="reviews.auto_tune", soft_time_limit=1800, time_limit=1860)
def auto_tune() -> int:
    """Apply, for each dataset that opted in (Dataset.auto_apply_proposals), the tuning
    proposals whose replay hides only dismissed findings (docs/history.md). Returns how
    many policy versions it made; a dataset that fails is logged and skipped."""
    from reviews.models import Dataset
    from reviews.orchestration.dataset import policies

    made = 0
    for dataset in Dataset.objects.filter(auto_apply_proposals=True):
        try:
            made += len(policies.auto_apply(dataset))
        except Exception:
            logger.exception("auto-tuning dataset %s failed", dataset.pk)
    return made


@shared_task(name="reviews.weekly_digest", soft_time_limit=600, time_limit=660)
def weekly_digest() -> None:
    """This week's digest for every subscription watching weekly_digest (beat: weekly)."""
    from reviews.orchestration.dataset import digests

    for delivery_id in digests.create_digests():
        deliver_webhook.delay(delivery_id=delivery_id)
