"""The steps of one review run, as plain functions over ids. Celery tasks call these;
each step only touches rows still in the state it expects, so running it twice (a
redelivered task) writes nothing twice.

The model pass (reviews.llm) rides on these steps: claim_run staffs the run (which
specialists get a model pass), run_specialist has its detector's findings judged when
staffed, coordinate has the coordinator model merge and summarise. Each is optional:
without a gateway, in a failback run, past the run's deadline, with the daily budget
spent or when a call fails, the rules' result stands and the AgentRun says why.
"""

from __future__ import annotations

import logging
import traceback
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from reviews.engine import coordinator
from reviews.engine.batch import Batch as ParsedBatch
from reviews.engine.findings import RawFinding, pack, unpack
from reviews.engine.gcpause import no_cyclic_gc
from reviews.engine.risk import SPECIALISTS_PER_TIER
from reviews.engine.specialists import NAMES, SPECIALISTS, detector
from reviews.llm.config import enabled
from reviews.llm.errors import LLMError
from reviews.llm.judge import (
    RULES_ONLY,
    CoordinatorResult,
    RunContext,
    candidate_counts,
    judge_coordinator,
    judge_specialist,
    staff_for_tier,
)
from reviews.models import AgentRun, ReviewRun, Verdict
from reviews.orchestration import serving
from reviews.orchestration.findings_store import write_findings
from reviews.orchestration.parsed import load_parsed

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
            counts = candidate_counts(load_parsed(run.batch), settings.REVIEW_RULES)
        except Exception:  # the specialist tasks will meet and record the failure
            logger.exception("run %s: counting candidates failed", run_id)
            counts = {}
        roster = staff_for_tier(run.tier, counts)
    ReviewRun.objects.filter(pk=run_id).update(specialists=roster)
    return roster


def models_allowed(run: ReviewRun) -> bool:
    """A gateway is configured and the run may spend (a failback run may not)."""
    return enabled() and serving.models_allowed(run)


def run_specialist(run_id: int, agent: str) -> None:
    """Run one specialist's detector, then its model pass if it has one, and keep the
    findings on its AgentRun. Never raises: a detector failure is recorded and marks
    the run degraded, so the coordinator still runs."""
    claimed = AgentRun.objects.filter(
        run_id=run_id, agent=agent, status=AgentRun.Status.PENDING
    ).update(status=AgentRun.Status.RUNNING, started_at=timezone.now())
    if not claimed:
        logger.info("run %s: %s already taken or finished; skipping", run_id, agent)
        return
    try:
        run = ReviewRun.objects.select_related("batch").get(pk=run_id)
        parsed = load_parsed(run.batch)
        findings = detector(agent)(parsed, settings.REVIEW_RULES)
    except Exception as error:  # includes Celery's SoftTimeLimitExceeded
        fail_agent(run_id, agent, error)
        return
    judged = model_pass(run, agent, parsed, findings)
    AgentRun.objects.filter(run_id=run_id, agent=agent).update(
        status=AgentRun.Status.DONE,
        model=judged.model,
        error=judged.note[:2000],
        packed_findings=pack(judged.findings, judged.dismissed),
        finished_at=timezone.now(),
    )


@dataclass(slots=True)
class Judged:
    findings: list[RawFinding]
    model: str = RULES_ONLY  # the model that judged them; "rules" if none did
    note: str = ""  # why a model pass that was due did not judge
    dismissed: list[RawFinding] = field(default_factory=list)


def model_pass(
    run: ReviewRun, agent: str, parsed: ParsedBatch, findings: list[RawFinding]
) -> Judged:
    """The specialist's model pass, when the run allows one and staffs this agent.

    A pass that was due and did not judge (the call failed, the budget is spent, the
    deadline passed, the task's soft limit struck) leaves the detector's findings as
    they are, with the reason on the AgentRun and each attempt in the ledger. It does
    not mark the run degraded: spec §5's `degraded` is a verdict reached without a
    specialist, and this one's rule findings are in the verdict."""
    if not models_allowed(run) or agent not in run.specialists:
        return Judged(findings)
    run_context = RunContext.for_run(run)
    if run_context.past_deadline:
        return Judged(findings, note=_no_judgement("the run's deadline had passed"))
    try:
        near = SPECIALISTS[agent].near_misses(
            parsed, settings.REVIEW_RULES, int(settings.LLM_NEAR_MISS_LIMIT)
        )
        result = judge_specialist(run_context, agent, findings, near, parsed)
    except Exception as error:  # the soft time limit, or a bug: the rules stand
        logger.exception("run %s: %s model pass broke off", run.pk, agent)
        return Judged(findings, note=_no_judgement(repr(error)))
    if result.model_failed:
        return Judged(findings, note=_no_judgement(result.error))
    return Judged(result.findings, result.model_served or RULES_ONLY, dismissed=result.dismissed)


def _no_judgement(why: str) -> str:
    return f"no model judgement ({why}); the detector's findings stand"


def fail_agent(run_id: int, agent: str, error: BaseException) -> None:
    logger.warning("run %s: %s failed: %r", run_id, agent, error)
    with transaction.atomic():
        AgentRun.objects.filter(run_id=run_id, agent=agent).exclude(
            status=AgentRun.Status.DONE
        ).update(
            status=AgentRun.Status.FAILED,
            error="".join(traceback.format_exception_only(error)).strip()[:2000],
            finished_at=timezone.now(),
        )
        ReviewRun.objects.filter(pk=run_id).update(degraded=True)


def coordinate(run_id: int) -> None:
    """Fuse the specialists' findings, have the coordinator model judge them if the run
    allows it, store findings and verdict, finish the run."""
    run = ReviewRun.objects.filter(pk=run_id).select_related("batch").first()
    if run is None or run.status in (ReviewRun.Status.DONE, ReviewRun.Status.FAILED):
        return
    claimed = AgentRun.objects.filter(
        run_id=run_id, agent=AgentRun.COORDINATOR, status=AgentRun.Status.PENDING
    ).update(status=AgentRun.Status.RUNNING, started_at=timezone.now())
    if not claimed:  # a redelivered coordinator: the first one has it (or had it)
        logger.info("run %s: the coordinator is already under way", run_id)
        return
    agents = {a.agent: a for a in run.agents.all()}
    # A specialist that never reported (its task was lost or killed) counts as failed.
    for name in NAMES:
        if agents[name].status in (AgentRun.Status.PENDING, AgentRun.Status.RUNNING):
            fail_agent(run_id, name, RuntimeError("no result before the coordinator ran"))
            agents[name].status = AgentRun.Status.FAILED
    failed = [name for name in NAMES if agents[name].status != AgentRun.Status.DONE]
    findings = [
        finding
        for name in NAMES
        if agents[name].status == AgentRun.Status.DONE
        for finding in unpack(agents[name].packed_findings)
    ]
    counts = run.batch.counts
    with no_cyclic_gc():
        review = coordinator.fuse(findings, counts, failed)
    model, note, degraded = RULES_ONLY, "", bool(failed)
    if models_allowed(run):
        try:
            judged = judge_coordinator(RunContext.for_run(run), review.findings, failed)
        except Exception as error:  # LLMError, the soft time limit, or a bug
            if not isinstance(error, LLMError):
                logger.exception("run %s: the coordinator's model pass broke off", run_id)
            # The rules coordinator's review stands; the run says it lacks the model's.
            note = f"no model judgement ({error!r}); the rules coordinator finished the run"
            review.summary += (
                " Degraded: the coordinator's model review failed, so the rules coordinator "
                "wrote this review."
            )
            degraded = True
        else:
            if judged is not None:
                review = judged_review(judged, counts, failed)
                model = judged.model_served
    save_review(run, review, degraded=degraded, coordinator_model=model, coordinator_note=note)


def judged_review(
    judged: CoordinatorResult, counts: dict[str, int], failed: list[str]
) -> coordinator.Review:
    """The coordinator model's findings, ordered and totalled as the rules coordinator
    orders them, with the model's summary. The verdict is spec §4's on these findings
    (coordinator.decide, inside fuse), never the model's."""
    review = coordinator.fuse(judged.findings, counts, failed)
    review.summary = judged.summary
    if failed:  # stated whatever the model wrote
        review.summary += (
            f" Degraded: the {', '.join(failed)} review failed, so this verdict was reached "
            "without it."
        )
    return review


def save_review(
    run: ReviewRun,
    review: coordinator.Review,
    *,
    degraded: bool,
    coordinator_model: str = RULES_ONLY,
    coordinator_note: str = "",
) -> None:
    now = timezone.now()
    with transaction.atomic():
        run.findings.all().delete()  # a redelivered coordinator replaces, never duplicates
        with no_cyclic_gc():
            write_findings(run.pk, review.findings)
        Verdict.objects.update_or_create(
            run=run,
            defaults={
                "decision": review.decision,
                "summary": review.summary,
                "pipeline_at_risk": review.pipeline_at_risk,
            },
        )
        AgentRun.objects.filter(run=run, agent=AgentRun.COORDINATOR).update(
            status=AgentRun.Status.DONE,
            model=coordinator_model,
            error=coordinator_note[:2000],
            finished_at=now,
        )
        ReviewRun.objects.filter(pk=run.pk).update(
            status=ReviewRun.Status.DONE, degraded=degraded, finished_at=now
        )


def sweep_stuck_runs() -> list[int]:
    """Fail runs that stopped making progress (a worker killed mid-run, a coordinator
    killed at its hard limit): running for longer than any run can legitimately take.
    They stay visible as failed, with the reason, and can be re-run."""
    longest = (
        settings.RUN_DEADLINE_SECONDS
        + settings.SPECIALIST_TIME_LIMIT
        + settings.COORDINATOR_TIME_LIMIT
    )
    cutoff = timezone.now() - timedelta(seconds=longest)
    stuck = list(
        ReviewRun.objects.filter(
            status=ReviewRun.Status.RUNNING, started_at__lt=cutoff
        ).values_list("pk", flat=True)
    )
    for run_id in stuck:
        fail_run(run_id, RuntimeError(f"no progress for over {longest} s; re-run it"))
    return stuck


def fail_run(run_id: int, error: BaseException) -> None:
    """Last resort when the coordinator itself cannot finish: the run is failed, visibly."""
    logger.error("run %s failed: %r", run_id, error)
    ReviewRun.objects.filter(pk=run_id).exclude(status=ReviewRun.Status.DONE).update(
        status=ReviewRun.Status.FAILED,
        degraded=True,
        error=repr(error)[:2000],
        finished_at=timezone.now(),
    )
