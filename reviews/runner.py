"""The steps of one review run, as plain functions over ids. Celery tasks call these;
each step only touches rows still in the state it expects, so running it twice (a
redelivered task) writes nothing twice."""

from __future__ import annotations

import logging
import traceback

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from reviews import coordinator
from reviews.findings import RawFinding
from reviews.models import AgentRun, Finding, ReviewRun, Verdict
from reviews.specialists import NAMES, detector
from reviews.submit import load_parsed

logger = logging.getLogger(__name__)


def claim_run(run_id: int) -> bool:
    """queued -> running. False if the run is gone or someone already started it."""
    claimed = ReviewRun.objects.filter(pk=run_id, status=ReviewRun.Status.QUEUED).update(
        status=ReviewRun.Status.RUNNING, started_at=timezone.now()
    )
    return bool(claimed)


def run_specialist(run_id: int, agent: str) -> None:
    """Run one specialist's detector and keep its findings on its AgentRun. Never raises:
    a failure is recorded and marks the run degraded, so the coordinator still runs."""
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
    AgentRun.objects.filter(run_id=run_id, agent=agent).update(
        status=AgentRun.Status.DONE,
        output=[f.to_json() for f in findings],
        finished_at=timezone.now(),
    )


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
    """Fuse the specialists' findings, store findings and verdict, finish the run."""
    run = ReviewRun.objects.filter(pk=run_id).select_related("batch").first()
    if run is None or run.status in (ReviewRun.Status.DONE, ReviewRun.Status.FAILED):
        return
    AgentRun.objects.filter(run_id=run_id, agent=AgentRun.COORDINATOR).update(
        status=AgentRun.Status.RUNNING, started_at=timezone.now()
    )
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
    ]
    review = coordinator.fuse(findings, run.batch.counts, failed)
    roster = staffed_specialists(findings, run.tier)
    save_review(run, review, roster, degraded=bool(failed))


def staffed_specialists(findings: list[RawFinding], tier: str) -> list[str]:
    """The tier's roster: its number of specialists, those with the most candidates first."""
    from reviews.risk import SPECIALISTS_PER_TIER

    candidates = {name: 0 for name in NAMES}
    for finding in findings:
        candidates[finding.category] = candidates.get(finding.category, 0) + 1
    ranked = sorted(NAMES, key=lambda name: (-candidates[name], NAMES.index(name)))
    return ranked[: SPECIALISTS_PER_TIER[tier]]


def save_review(
    run: ReviewRun, review: coordinator.Review, roster: list[str], *, degraded: bool
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
                    amount_at_risk=f.amount_at_risk or None,
                    source=f.source,
                )
                for position, f in enumerate(review.findings)
            ),
            batch_size=2000,
        )
        Verdict.objects.update_or_create(
            run=run,
            defaults={
                "decision": review.decision,
                "summary": review.summary,
                "pipeline_at_risk": review.pipeline_at_risk,
            },
        )
        AgentRun.objects.filter(run=run, agent=AgentRun.COORDINATOR).update(
            status=AgentRun.Status.DONE, finished_at=now
        )
        ReviewRun.objects.filter(pk=run.pk).update(
            status=ReviewRun.Status.DONE,
            degraded=degraded,
            specialists=roster,
            finished_at=now,
        )


def fail_run(run_id: int, error: BaseException) -> None:
    """Last resort when the coordinator itself cannot finish: the run is failed, visibly."""
    logger.error("run %s failed: %r", run_id, error)
    ReviewRun.objects.filter(pk=run_id).exclude(status=ReviewRun.Status.DONE).update(
        status=ReviewRun.Status.FAILED,
        degraded=True,
        error=repr(error)[:2000],
        finished_at=timezone.now(),
    )
