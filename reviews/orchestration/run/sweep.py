"""Bring back the work of dead workers and lost messages: the periodic sweep.

A run's progress lives in its rows, so the sweep can tell from them alone what was lost:
- a running agent whose heartbeat stopped (its worker was killed): taken back to
  pending and sent again, at most RUN_RETRY_LIMIT times, then failed (a specialist
  leaves the run degraded; a coordinator fails the run);
- a queued run whose start never reached the broker (dispatched_at empty), sent again
  after DISPATCH_GRACE_SECONDS, failed after RUN_RETRY_LIMIT sends;
- work nobody started for QUEUED_REDISPATCH_SECONDS (a queued run, a pending specialist
  of a running run, a coordinator whose specialists all finished, after
  DISPATCH_GRACE_SECONDS for the coordinator): its message may be lost (a broker that
  restarted without its data, a worker killed holding it), so it is sent again, every
  QUEUED_REDISPATCH_SECONDS, but never failed for waiting: it may only be behind a
  long queue, and a copy is harmless;
- stored uploads left unread for UNREAD_RESEND_SECONDS (a worker died reading one, or
  the message to read it was lost while the database or the broker was down): sent to
  a worker again; it reads each once (submit.accept_stored_upload);
- model calls whose worker died mid-call (a ledger row still `pending` past the call's
  timeout): marked `lost`, their tokens sent counted (ledger.pending);
- uploads spooled while the database was down (reviews.orchestration.store.spool): counted
  here, imported by the `reviews.import_spool` task the sweep task sends.

Each take-back is a conditional UPDATE on the state the sweep saw, so two sweeps at once
(or a worker finishing just then) never both act. What to send is returned as plain data;
the sweep task sends it (reviews.orchestration.run.tasks). A duplicate send is harmless: every
step claims its row before it works (reviews.orchestration.run.runner).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import redis
from django.conf import settings
from django.db.models import Max, Q
from django.utils import timezone

from ledger import pending
from ledger.redis_client import KEY_PREFIX, get_client
from reviews.engine.specialists import NAMES
from reviews.models import AgentRun, Batch, ReviewRun
from reviews.orchestration.run.runner import fail_agent, fail_run, specialists_finished
from reviews.orchestration.store import spool
from reviews.orchestration.store.unread import accept_message, unread

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class Plan:
    """What one sweep found to send again, and what it gave up on."""

    start: list[int] = field(default_factory=list)  # runs, to start_review
    specialists: list[tuple[int, str]] = field(default_factory=list)  # to run_specialist
    coordinate: list[int] = field(default_factory=list)  # runs, to coordinate
    failed: list[str] = field(default_factory=list)  # "run 7: dedup", "run 8"
    spooled: int = 0  # uploads waiting in the spool, to import
    lost_calls: int = 0  # ledger rows of calls whose worker died, marked lost
    unread: list[dict] = field(default_factory=list)  # accept messages of stored uploads
    broker_forgot: bool = False  # Redis came back empty: every message waiting was lost

    @property
    def empty(self) -> bool:
        return not (self.start or self.specialists or self.coordinate or self.failed or self.unread)


def sweep(now: datetime | None = None) -> Plan:
    now = now or timezone.now()
    plan = Plan(broker_forgot=broker_forgot())
    _silent_agents(now, plan)
    _unclaimed_agents(now, plan)
    _waiting_coordinators(now, plan)
    _queued_runs(now, plan)
    plan.lost_calls = pending.mark_lost(now)
    _unread_batches(now, plan)
    plan.spooled = len(spool.pending())
    plan.coordinate = sorted(set(plan.coordinate))
    return plan


CANARY = f"{KEY_PREFIX}sweep-canary"  # set by every sweep; gone when Redis lost its data


def broker_forgot() -> bool:
    """Whether Redis (the broker) came back without its data since the last sweep: the
    canary key every sweep sets is gone. Then every message waiting in it was lost, and
    the work it held is sent again now, not QUEUED_REDISPATCH_SECONDS later. True on
    the first sweep ever too (a copy is harmless); False without Redis or reaching it."""
    client = get_client()
    if client is None:
        return False
    try:
        forgot = bool(client.set(CANARY, "1", nx=True))
    except redis.RedisError:
        return False
    if forgot:
        logger.warning("sweep: Redis holds no canary (restarted empty?); sending waiting work")
    return forgot


def _redispatch_cutoff(now: datetime, plan: Plan) -> datetime:
    """Work sent before this and not taken up is sent again."""
    return now if plan.broker_forgot else _ago(now, "QUEUED_REDISPATCH_SECONDS")


def _limit() -> int:
    return int(settings.RUN_RETRY_LIMIT)


def _ago(now: datetime, setting: str) -> datetime:
    return now - timedelta(seconds=int(getattr(settings, setting)))


def _silent_agents(now: datetime, plan: Plan) -> None:
    """Running agents of running runs whose heartbeat stopped."""
    silent = AgentRun.objects.filter(
        status=AgentRun.Status.RUNNING,
        run__status=ReviewRun.Status.RUNNING,
        heartbeat_at__lt=_ago(now, "HEARTBEAT_TIMEOUT_SECONDS"),
    )
    for agent in silent:
        why = f"its worker stopped (no heartbeat for {settings.HEARTBEAT_TIMEOUT_SECONDS} s)"
        _send_again(agent, AgentRun.Status.RUNNING, why, now, plan)


def _unclaimed_agents(now: datetime, plan: Plan) -> None:
    """Pending specialists of running runs that no worker took up for long: their
    messages were lost (a broker restarted without its data)."""
    cutoff = _redispatch_cutoff(now, plan)
    unclaimed = AgentRun.objects.filter(
        Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=cutoff),
        status=AgentRun.Status.PENDING,
        agent__in=NAMES,
        run__status=ReviewRun.Status.RUNNING,
        run__started_at__lt=cutoff,
    )
    for agent in unclaimed:
        if _mark_sent(agent, now):
            logger.warning("run %s: %s not taken up; sending it again", agent.run_id, agent.agent)
            plan.specialists.append((agent.run_id, agent.agent))


def _mark_sent(agent: AgentRun, now: datetime) -> bool:
    """Note on a pending agent that the sweep sends it now (heartbeat_at on a pending
    row), unless someone took it meanwhile. Work nobody started is sent again but never
    failed for waiting: it may only be behind a long queue, and a copy is harmless."""
    return bool(
        AgentRun.objects.filter(
            pk=agent.pk, status=AgentRun.Status.PENDING, heartbeat_at=agent.heartbeat_at
        ).update(heartbeat_at=now)
    )


def _send_again(agent: AgentRun, seen: str, why: str, now: datetime, plan: Plan) -> None:
    """Take `agent` back to pending and plan its send, or fail it past the retry limit.
    heartbeat_at on a pending row is when the sweep last sent it."""
    label = f"run {agent.run_id}: {agent.agent}"
    if agent.retries >= _limit():
        error = RuntimeError(f"{why}; sent {agent.retries + 1} times, giving up")
        plan.failed.append(label)
        if agent.agent == AgentRun.COORDINATOR:
            fail_run(agent.run_id, error)
            return
        fail_agent(agent.run_id, agent.agent, error)
        if specialists_finished(agent.run_id):
            plan.coordinate.append(agent.run_id)
        return
    taken = AgentRun.objects.filter(
        pk=agent.pk, status=seen, retries=agent.retries, heartbeat_at=agent.heartbeat_at
    ).update(status=AgentRun.Status.PENDING, retries=agent.retries + 1, heartbeat_at=now)
    if not taken:  # it beat, finished or was taken meanwhile
        return
    logger.warning("%s: %s; sending it again (retry %s)", label, why, agent.retries + 1)
    if agent.agent == AgentRun.COORDINATOR:
        plan.coordinate.append(agent.run_id)
    else:
        plan.specialists.append((agent.run_id, agent.agent))


def _waiting_coordinators(now: datetime, plan: Plan) -> None:
    """Runs whose specialists have all finished, with a coordinator never sent (or sent
    long ago and never taken up)."""
    grace = _ago(now, "DISPATCH_GRACE_SECONDS")
    waiting = AgentRun.objects.filter(
        Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=_redispatch_cutoff(now, plan)),
        agent=AgentRun.COORDINATOR,
        status=AgentRun.Status.PENDING,
        run__status=ReviewRun.Status.RUNNING,
    )
    for coordinator in waiting:
        if not specialists_finished(coordinator.run_id):
            continue
        last = AgentRun.objects.filter(run_id=coordinator.run_id, agent__in=NAMES).aggregate(
            last=Max("finished_at")
        )["last"]
        if (last is None or last < grace) and _mark_sent(coordinator, now):
            logger.warning("run %s: coordinator not taken up; sending it", coordinator.run_id)
            plan.coordinate.append(coordinator.run_id)


def _queued_runs(now: datetime, plan: Plan) -> None:
    """Queued runs whose start never reached the broker (sent again, failed after the
    retries), or reached it long ago (sent again: its message may be lost, or only
    behind a long queue; the send renews dispatched_at)."""
    waited = ReviewRun.objects.filter(
        status=ReviewRun.Status.QUEUED, dispatched_at__lt=_redispatch_cutoff(now, plan)
    )
    for run in waited:
        logger.warning("run %s: still queued; sending it again", run.pk)
        plan.start.append(run.pk)
    never_sent = ReviewRun.objects.filter(
        status=ReviewRun.Status.QUEUED,
        dispatched_at__isnull=True,
        created_at__lt=_ago(now, "DISPATCH_GRACE_SECONDS"),
    )
    for run in never_sent:
        if run.retries >= _limit():
            fail_run(run.pk, RuntimeError(f"no worker started it; sent {run.retries + 1} times"))
            plan.failed.append(f"run {run.pk}")
            continue
        taken = ReviewRun.objects.filter(
            pk=run.pk, status=ReviewRun.Status.QUEUED, retries=run.retries, dispatched_at=None
        ).update(retries=run.retries + 1)
        if taken:
            logger.warning("run %s: its dispatch never reached the broker; sending it", run.pk)
            plan.start.append(run.pk)


def _unread_batches(now: datetime, plan: Plan) -> None:
    """Stored uploads nobody read (received, or accepted with no run and not refused)
    for UNREAD_RESEND_SECONDS, from the last day: sent to a worker again, with the one
    accept message (the batch id: what the upload asked for is on its row)."""
    candidates = Batch.objects.filter(
        status__in=(Batch.Status.RECEIVED, Batch.Status.ACCEPTED),
        runs__isnull=True,
        created_at__lt=_ago(now, "UNREAD_RESEND_SECONDS"),
        created_at__gt=now - timedelta(days=1),
    ).order_by("pk")[: _limit() * 100]
    for batch_id in candidates.values_list("pk", flat=True):
        if not unread(batch_id):
            continue
        logger.warning("batch %s: stored but never read; sending it to a worker", batch_id)
        plan.unread.append(accept_message(batch_id))
