"""The steps of one review run, as plain functions over ids. Celery tasks call these;
each step only touches rows still in the state it expects, so running it twice (a
redelivered task) writes nothing twice.

The model pass (reviews.llm) rides on these steps: claim_run staffs the run (which
specialists get a model pass), run_specialist has its detector's findings judged when
staffed, and the coordinator's step (reviews.orchestration.run.coordination) has the
coordinator model merge and summarise. Each is optional: without a gateway, in a
failback run, past the run's deadline, with the daily budget spent or when a call
fails, the rules' result stands and the AgentRun says why.
"""

from __future__ import annotations

import logging
import traceback
from dataclasses import dataclass, field, replace

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from alerts.tasks import run_finished
from ledger import budget
from reviews.engine.batch import Batch as ParsedBatch
from reviews.engine.findings import RawFinding
from reviews.engine.history.policy import apply as apply_policy
from reviews.engine.history.policy import rules_for
from reviews.engine.risk import SPECIALISTS_PER_TIER
from reviews.engine.specialists import (
    NAMES,
    SPECIALISTS,
    detector,
    price_findings,
    without_switched_off,
)
from reviews.engine.storable import storable
from reviews.llm.config import enabled
from reviews.llm.judge import (
    RULES_ONLY,
    RunContext,
    candidate_counts,
    judge_specialist,
    staff_for_tier,
)
from reviews.models import AgentRun, ReviewRun
from reviews.orchestration.dataset import policies
from reviews.orchestration.dataset.dismissals import prompt_dismissals
from reviews.orchestration.run import handoff, limits
from reviews.orchestration.run.heartbeat import beating
from reviews.orchestration.serving import decide as serving
from reviews.orchestration.store import tables
from reviews.orchestration.store.parsed import load_parsed

logger = logging.getLogger(__name__)


def claim_run(run_id: int) -> bool:
    """queued -> running, with its roster. True too for a run claimed but whose
    specialists never started (its start task died before sending them and was
    redelivered); False if the run is gone or already under way."""
    claimed = ReviewRun.objects.filter(pk=run_id, status=ReviewRun.Status.QUEUED).update(
        status=ReviewRun.Status.RUNNING, started_at=timezone.now()
    )
    if claimed:
        staff_run(run_id)
        return True
    run = ReviewRun.objects.filter(pk=run_id, status=ReviewRun.Status.RUNNING).first()
    return run is not None and not run.agents.exclude(status=AgentRun.Status.PENDING).exists()


def staff_run(run_id: int) -> list[str]:
    """Store which specialists get a model pass (ReviewRun.specialists): the tier's
    number, those with the most rule candidates first.

    The ranking needs every detector's count before any specialist task runs, so here
    the detectors run once more, but only where the ranking matters: a full tier staffs
    all four, and trivial and lite batches are small by definition (score at most
    TIER_LITE_MAX_SCORE), so the extra work is a few records' worth."""
    run = ReviewRun.objects.select_related("batch").get(pk=run_id)
    if SPECIALISTS_PER_TIER[run.tier] >= len(NAMES):
        roster = list(NAMES)
    else:
        try:
            counts = candidate_counts(load_parsed(run.batch), policies.rules_of(run.policy_version))
        except Exception:  # the specialist tasks will meet and record the failure
            logger.exception("run %s: counting candidates failed", run_id)
            counts = {}
        roster = staff_for_tier(run.tier, counts)
    ReviewRun.objects.filter(pk=run_id).update(specialists=roster)
    return roster


def models_allowed(run: ReviewRun) -> bool:
    """A gateway is configured and the run may spend (a failback run may not)."""
    return enabled() and serving.models_allowed(run)


def claim_agent(run_id: int, agent: str) -> int | None:
    """pending -> running, with a first heartbeat. Returns the agent's `retries` as it
    was claimed (a fencing token: the sweep bumps it when it takes the agent back, so a
    worker it gave up on cannot overwrite the next one's result), or None if the agent
    is already taken or finished (a redelivered task)."""
    row = (
        AgentRun.objects.filter(run_id=run_id, agent=agent, status=AgentRun.Status.PENDING)
        .values_list("retries", flat=True)
        .first()
    )
    if row is None:
        return None
    now = timezone.now()
    claimed = AgentRun.objects.filter(
        run_id=run_id, agent=agent, status=AgentRun.Status.PENDING, retries=row
    ).update(status=AgentRun.Status.RUNNING, started_at=now, heartbeat_at=now)
    return row if claimed else None


def run_specialist(run_id: int, agent: str) -> bool:
    """Run one specialist's detector, then its model pass if it has one, and keep the
    findings on its AgentRun, beating while it works. Never raises: a detector failure
    is recorded and marks the run degraded, so the coordinator still runs. Returns
    whether every specialist of the run has now finished (the caller then dispatches the
    coordinator; of two finishing at once both may, and the coordinator's claim lets one
    through)."""
    token = claim_agent(run_id, agent)
    if token is None:
        logger.info("run %s: %s already taken or finished; skipping", run_id, agent)
        return False
    with beating(run_id, agent):
        try:
            run = ReviewRun.objects.select_related("batch", "policy_version").get(pk=run_id)
            parsed = load_parsed(run.batch)
            if tables.needs_tables(run.batch):  # once per batch, while the parse is here
                tables.keep_tables_or_log(run.batch, parsed)
            # The dataset's policy the run recorded: its Rules, then its filter (kinds
            # off, severities changed), both pure engine functions.
            policy = policies.of_version(run.policy_version)
            findings = apply_policy(
                detector(agent)(parsed, rules_for(settings.REVIEW_RULES, policy)), policy
            )
        except Exception as error:  # includes Celery's SoftTimeLimitExceeded
            fail_agent(run_id, agent, error)
            return specialists_finished(run_id)
        judged = model_pass(run, agent, parsed, findings)
    try:
        # Still the specialist's work: a failure here degrades the run like one in its
        # detector, never leaves the agent running until the sweep gives up on it.
        judged.findings = apply_policy(judged.findings, policy)  # a model's too
        judged.findings = without_switched_off(judged.findings, parsed)  # columns missing
        price_findings(judged.findings, parsed)  # the model's own findings need theirs too
        # A savepoint: a refused write (text the database cannot hold) leaves the
        # connection usable for recording the failure itself.
        with transaction.atomic():
            saved = AgentRun.objects.filter(
                run_id=run_id, agent=agent, status=AgentRun.Status.RUNNING, retries=token
            ).update(
                status=AgentRun.Status.DONE,
                model=judged.model,
                error=judged.note[:2000],
                packed_findings=handoff.pack_for_coordinator(
                    run_id, agent, judged.findings, judged.dismissed
                ),
                refused=judged.refused,
                finished_at=timezone.now(),
            )
    except Exception as error:  # the agent failed, and says with what
        fail_agent(run_id, agent, error)
        return specialists_finished(run_id)
    if not saved:  # the sweep took it back meanwhile; the next attempt's result stands
        logger.warning("run %s: %s was taken back while it ran; result dropped", run_id, agent)
    return specialists_finished(run_id)


def specialists_finished(run_id: int) -> bool:
    """Every specialist of a running run is done or failed."""
    return (
        ReviewRun.objects.filter(pk=run_id, status=ReviewRun.Status.RUNNING).exists()
        and not AgentRun.objects.filter(run_id=run_id, agent__in=NAMES)
        .exclude(status__in=(AgentRun.Status.DONE, AgentRun.Status.FAILED))
        .exists()
    )


@dataclass(slots=True)
class Judged:
    findings: list[RawFinding]
    model: str = RULES_ONLY  # the model that judged them; "rules" if none did
    note: str = ""  # why a model pass that was due did not judge
    dismissed: list[RawFinding] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # what the guards did not let it do


def model_pass(
    run: ReviewRun, agent: str, parsed: ParsedBatch, findings: list[RawFinding]
) -> Judged:
    """The specialist's model pass, when the run allows one and staffs this agent.

    A pass that was due and did not judge (the call failed, the budget is spent, the
    deadline passed, the task's soft limit struck) leaves the detector's findings as
    they are, with the reason on the AgentRun and each attempt in the ledger. It does
    not mark the run degraded: `degraded` (docs/output.md) is a verdict reached without a
    specialist, and this one's rule findings are in the verdict."""
    if not models_allowed(run) or agent not in run.specialists:
        return Judged(findings)
    model_context = run_context(run)
    if model_context.past_deadline:
        return Judged(findings, note=_no_judgement("the run's deadline had passed"))
    try:
        near = SPECIALISTS[agent].near_misses(
            parsed, policies.rules_of(run.policy_version), int(settings.LLM_NEAR_MISS_LIMIT)
        )
        result = judge_specialist(model_context, agent, findings, near, parsed)
    except Exception as error:  # the soft time limit, or a bug: the rules stand
        logger.exception("run %s: %s model pass broke off", run.pk, agent)
        return Judged(findings, note=_no_judgement(repr(error)))
    if result.model_failed:
        return Judged(findings, note=_no_judgement(result.error))
    return Judged(
        result.findings,
        result.model_served or RULES_ONLY,
        dismissed=result.dismissed,
        refused=result.refused,
    )


def _no_judgement(why: str) -> str:
    return f"no model judgement ({why}); the detector's findings stand"


def fail_agent(run_id: int, agent: str, error: BaseException | str) -> None:
    """Record an agent's failure (an exception, or why in words); the run is degraded."""
    why = error if isinstance(error, str) else limits.reason(error)
    why = why or "".join(traceback.format_exception_only(error)).strip()
    logger.warning("run %s: %s failed: %s", run_id, agent, why)

    def record() -> None:
        with transaction.atomic():
            AgentRun.objects.filter(run_id=run_id, agent=agent).exclude(
                status=AgentRun.Status.DONE
            ).update(
                status=AgentRun.Status.FAILED,
                error=storable(why)[:2000],
                finished_at=timezone.now(),
            )
            ReviewRun.objects.filter(pk=run_id).update(degraded=True)

    limits.recorded(record)


def run_context(run: ReviewRun) -> RunContext:
    """The run's model context, with its dataset's dismissals as examples of what not
    to flag (in the shared block, so every agent's prompt prefix stays the same)."""
    base = RunContext.for_run(run)
    dataset_id = run.batch.dataset_id
    if dataset_id is None:
        return base
    return replace(base, dismissals=prompt_dismissals(dataset_id))


def fail_run(run_id: int, error: BaseException | str) -> None:
    """Last resort when the coordinator itself cannot finish (or the run cannot start):
    the run is failed, visibly, with the error or why in words."""
    why = error if isinstance(error, str) else limits.reason(error) or repr(error)
    logger.error("run %s failed: %s", run_id, why)
    failed = limits.recorded(
        lambda: (
            ReviewRun.objects.filter(pk=run_id)
            .exclude(status=ReviewRun.Status.DONE)
            .update(
                status=ReviewRun.Status.FAILED,
                degraded=True,
                error=storable(why)[:2000],
                finished_at=timezone.now(),
            )
        )
    )
    budget.release_run(run_id)
    if failed:  # alerts, after the commit (a second call makes no second delivery)
        run_finished(run_id)
