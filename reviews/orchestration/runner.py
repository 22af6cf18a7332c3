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
from dataclasses import dataclass, field, replace
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from alerts.tasks import run_finished
from reviews.engine import coordinator, history
from reviews.engine.batch import Batch as ParsedBatch
from reviews.engine.findings import MIXED, RawFinding
from reviews.engine.ingest.safe_text import make_safe
from reviews.engine.risk import SPECIALISTS_PER_TIER
from reviews.engine.specialists import NAMES, SPECIALISTS, detector, price_findings
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
from reviews.models import AgentRun, Finding, ReviewRun, Verdict
from reviews.orchestration import baselines, serving
from reviews.orchestration.dismissals import prompt_dismissals
from reviews.orchestration.parsed import load_parsed

logger = logging.getLogger(__name__)

# Marks a finding the model dismissed in AgentRun.output: kept there with its reason
# for the record, left out of the review.
DISMISSED = "dismissed"


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
    price_findings(judged.findings, parsed)  # the model's own findings need theirs too
    try:
        # A savepoint: a refused write (text the database cannot hold) leaves the
        # connection usable for recording the failure itself.
        with transaction.atomic():
            AgentRun.objects.filter(run_id=run_id, agent=agent).update(
                status=AgentRun.Status.DONE,
                model=judged.model,
                error=judged.note[:2000],
                output=[f.to_json() for f in judged.findings]
                + [{**f.to_json(), DISMISSED: True} for f in judged.dismissed],
                finished_at=timezone.now(),
            )
    except Exception as error:  # the agent failed, and says with what
        fail_agent(run_id, agent, error)


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
    not mark the run degraded: `degraded` (docs/output.md) is a verdict reached without a
    specialist, and this one's rule findings are in the verdict."""
    if not models_allowed(run) or agent not in run.specialists:
        return Judged(findings)
    model_context = run_context(run)
    if model_context.past_deadline:
        return Judged(findings, note=_no_judgement("the run's deadline had passed"))
    try:
        near = SPECIALISTS[agent].near_misses(
            parsed, settings.REVIEW_RULES, int(settings.LLM_NEAR_MISS_LIMIT)
        )
        result = judge_specialist(model_context, agent, findings, near, parsed)
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
            error=make_safe("".join(traceback.format_exception_only(error)).strip())[:2000],
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
        RawFinding.from_json(item)
        for name in NAMES
        if agents[name].status == AgentRun.Status.DONE
        for item in agents[name].output
        if not item.get(DISMISSED)
    ]
    counts = run.batch.counts
    review = coordinator.fuse(findings, counts, failed)
    # Dataset history: the team's dismissed problems are set aside before anything
    # judges or counts them (spec section 6).
    context = baselines.history_context(run)
    suppressed: list[RawFinding] = []
    if context and context.dismissed:
        kept, suppressed = history.split_suppressed(review.findings, context.dismissed)
        if suppressed:
            review = coordinator.fuse(kept, counts, failed)
    model, note, degraded = RULES_ONLY, "", bool(failed)
    if models_allowed(run):
        try:
            judged = judge_coordinator(run_context(run), review.findings, failed)
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
    comparison = history.compare(
        review.findings,
        suppressed,
        context.baseline if context else None,
        run.as_of,
        context.dismissed if context else None,
    )
    if context:
        review = history.apply_scope(review, comparison, context.verdict_scope)
    save_review(
        run,
        review,
        comparison,
        degraded=degraded,
        coordinator_model=model,
        coordinator_note=note,
    )


def run_context(run: ReviewRun) -> RunContext:
    """The run's model context, with its dataset's dismissals as examples of what not
    to flag (in the shared block, so every agent's prompt prefix stays the same)."""
    base = RunContext.for_run(run)
    dataset_id = run.batch.dataset_id
    if dataset_id is None:
        return base
    return replace(base, dismissals=prompt_dismissals(dataset_id))


def judged_review(
    judged: CoordinatorResult, counts: dict[str, int], failed: list[str]
) -> coordinator.Review:
    """The coordinator model's findings, ordered and totalled as the rules coordinator
    orders them, with the model's summary. The verdict follows the policy in docs/rules.md
    on these findings (coordinator.decide, inside fuse), never the model's."""
    review = coordinator.fuse(judged.findings, counts, failed)
    review.summary = judged.summary
    if failed:  # stated whatever the model wrote
        review.summary += (
            f" Degraded: the {', '.join(failed)} review failed, so this verdict was reached "
            "without it."
        )
    return review


# numeric(18, 2): each amount is bounded at ingest, but a sum over many deals need not be.
_MAX_STORED_AMOUNT = Decimal("9999999999999999.99")


def _storable(amount: Decimal | None) -> Decimal | None:
    """The amount, capped to what its column holds (a sum past that is shown capped,
    rather than the review failing on an overflow)."""
    if amount is None:
        return None
    return max(-_MAX_STORED_AMOUNT, min(amount, _MAX_STORED_AMOUNT))


def save_review(
    run: ReviewRun,
    review: coordinator.Review,
    comparison: history.Comparison,
    *,
    degraded: bool,
    coordinator_model: str = RULES_ONLY,
    coordinator_note: str = "",
) -> None:
    now = timezone.now()
    with transaction.atomic():
        run.findings.all().delete()  # a redelivered coordinator replaces, never duplicates
        Finding.objects.bulk_create(
            (
                Finding(
                    run=run,
                    position=position,
                    category=f.category,
                    kind=f.kind,
                    severity=f.severity,
                    title=f.title[:500],
                    detail=f.detail,
                    record_ids=f.record_ids,
                    suggested_fix=f.suggested_fix,
                    confidence=f.confidence,
                    # Money in several currencies is not summed into one amount.
                    amount_at_risk=(
                        (_storable(f.amount_at_risk) or None) if f.currency != MIXED else None
                    ),
                    currency=f.currency,
                    source=f.source,
                    fingerprint=marked.fingerprint,
                    status=marked.status,
                    first_seen=marked.first_seen,
                )
                for position, marked in enumerate(comparison.findings)
                for f in (marked.finding,)
            ),
            batch_size=2000,
        )
        Verdict.objects.update_or_create(
            run=run,
            defaults={
                "decision": review.decision,
                "summary": review.summary,
                "pipeline_at_risk": _storable(review.pipeline_at_risk),
                "pipeline_by_currency": {
                    code: str(amount) for code, amount in review.pipeline_by_currency.items()
                },
            },
        )
        AgentRun.objects.filter(run=run, agent=AgentRun.COORDINATOR).update(
            status=AgentRun.Status.DONE,
            model=coordinator_model,
            error=coordinator_note[:2000],
            finished_at=now,
        )
        ReviewRun.objects.filter(pk=run.pk).update(
            status=ReviewRun.Status.DONE,
            degraded=degraded,
            finished_at=now,
            resolved=comparison.resolved,
            suppressed=[history.suppressed_entry(m) for m in comparison.suppressed],
        )
    run_finished(run.pk)  # alerts, after the commit


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
    failed = (
        ReviewRun.objects.filter(pk=run_id)
        .exclude(status=ReviewRun.Status.DONE)
        .update(
            status=ReviewRun.Status.FAILED,
            degraded=True,
            error=repr(error)[:2000],
            finished_at=timezone.now(),
        )
    )
    if failed:  # alerts, after the commit (a second call makes no second delivery)
        run_finished(run_id)
