"""A parsed upload served: the run decide_serve asks for (reviews.orchestration.serving.
decide), a copy of a finished review (cached, failback) or a queued run sent to the
workers; and the re-run button's new review of a stored batch."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from alerts.tasks import run_finished
from reviews.engine import batch as plain
from reviews.engine.risk import classify_risk
from reviews.engine.specialists import NAMES
from reviews.models import AgentRun, Batch, ReviewRun, Verdict
from reviews.orchestration.dataset import arrival, baselines, policies
from reviews.orchestration.run.tasks import send_start
from reviews.orchestration.serving import decide as serving
from reviews.orchestration.store.parsed import parse_stored

# AgentRun.model of a run served from another run's review: no detector or model ran.
REUSED_MODEL = "cached"


class ServeRefused(Exception):
    """The request is refused (its client is far over the rate limit): answer HTTP 429
    with Retry-After, or exit 2 in the CLI. The batch is kept, accepted; no run is made."""

    def __init__(self, reason: str, retry_after: int, *, batch: Batch | None = None) -> None:
        super().__init__(f"{reason}; retry after {retry_after} s")
        self.reason = reason
        self.retry_after = retry_after  # seconds
        self.batch = batch


def serve(
    batch: Batch,
    parsed: plain.Batch,
    *,
    created_by=None,
    rate_keys: list[str] | None = None,
    no_cache: bool = False,
) -> ReviewRun:
    """Make the run decide_serve asks for: a copy of a finished review (cached, or
    failback with a last good run) or a queued run (fresh, or failback reviewed by the
    detectors alone). Raises ServeRefused when the request is refused."""
    baseline = baselines.choose_baseline(batch)
    arrival.note_arrival(batch, parsed, baseline)  # late, or sharing no record with it
    policy_version, _ = policies.current(batch.dataset)
    fingerprint = baselines.serving_key(
        serving.config_fingerprint(), batch, baseline, policy_version
    )
    risk = classify_risk(parsed, policies.rules_of(policy_version))
    decision = serving.decide_serve(
        batch.content_key,
        fingerprint,
        rate_keys,
        no_cache=no_cache,
        workspace_id=batch.workspace_id,
        user_id=getattr(created_by, "pk", None) or batch.created_by_id,  # per-user budget
        expected_calls=risk.specialist_count + 1,  # the staffed specialists, the coordinator
    )
    if decision.is_error:
        raise ServeRefused(decision.reason, decision.retry_after or 1, batch=batch)
    mode = decision.mode
    if decision.reuse_run_id is not None:
        run = reuse_run(batch, decision, created_by=created_by)
        if run is not None:
            return run
        # The reused run was deleted since the decision: review the batch instead (a
        # failback one by the detectors alone). The runner's own budget reservations
        # still guard the spend of a fresh one.
        if mode == ReviewRun.Mode.CACHED:
            mode = ReviewRun.Mode.FRESH
    return create_run(
        batch,
        parsed,
        tier=risk.tier,
        created_by=created_by,
        mode=mode,
        reason=decision.reason,
        fingerprint=fingerprint,
        baseline=baseline,
        reserved_tokens=decision.reserved_tokens if mode == ReviewRun.Mode.FRESH else 0,
        policy_version=policy_version,
    )


def create_run(
    batch: Batch,
    parsed: plain.Batch,
    *,
    tier: str,
    created_by=None,
    mode: str = ReviewRun.Mode.FRESH,
    reason: str = "",
    fingerprint: str = "",
    baseline: ReviewRun | None = None,
    reserved_tokens: int = 0,
    policy_version=None,
) -> ReviewRun:
    """A queued run for the tasks. A failback run is reviewed by the detectors alone
    (serving.models_allowed)."""
    with transaction.atomic():
        run = ReviewRun.objects.create(
            batch=batch,
            mode=mode,
            reason=reason[:300],
            config_fingerprint=fingerprint,
            baseline_run=baseline,
            reserved_tokens=reserved_tokens,
            policy_version=policy_version,
            tier=tier,
            as_of=parsed.as_of,
            created_by=created_by,
        )
        AgentRun.objects.bulk_create(
            AgentRun(run=run, agent=name) for name in (*NAMES, AgentRun.COORDINATOR)
        )
    return run


def dispatch_review(run: ReviewRun) -> None:
    # On commit, so a worker never picks up a run it cannot see yet.
    transaction.on_commit(lambda: send_start(run.pk))


def rerun(run: ReviewRun, *, created_by=None, rate_keys: list[str] | None = None) -> ReviewRun:
    """A new review of a run's batch (the re-run button). It is an explicit request for
    a fresh review, so it skips the cache; like any request it counts against the rate
    limit and the budget, so it may be served by failback. Raises ServeRefused."""
    batch = run.batch
    dataset = batch.dataset
    if dataset is not None and (dataset.pipelines or []) != (batch.pipelines or []):
        # The dataset learned pipelines since: the new review reads the batch with them.
        batch.pipelines = dataset.pipelines or []
        batch.content_key = ""
    parsed = parse_stored(batch)
    if not batch.content_key:  # accepted before batches had one, or pipelines changed
        batch.content_key = serving.content_key(parsed)
        batch.stage_sources = parsed.stage_sources()
        batch.stage_source = parsed.stage_source(batch.stage_sources)
        batch.save(update_fields=["content_key", "pipelines", "stage_source", "stage_sources"])
    new_run = serve(batch, parsed, created_by=created_by, rate_keys=rate_keys, no_cache=True)
    if new_run.status == ReviewRun.Status.QUEUED:
        dispatch_review(new_run)
    return new_run


# --- serving another run's review ----------------------------------------------------
# A cached or failback run references the reused run's findings (every reader goes
# through reviews.models.findings_of), so serving a 180k-finding review writes a handful
# of rows, not 180k. It gets its own copy of the verdict (one row, without any
# break-glass override). Its agent rows are done with model REUSED_MODEL: nothing ran
# for it, and its ledger is empty.


def reuse_run(
    batch: Batch, decision: serving.ServeDecision, *, created_by=None
) -> ReviewRun | None:
    """A finished run of `batch` serving the review of run `decision.reuse_run_id`, or
    None if that run is gone."""
    now = timezone.now()
    with transaction.atomic():
        source = (
            ReviewRun.objects.filter(pk=decision.reuse_run_id).select_related("verdict").first()
        )
        if source is None:
            return None
        run = ReviewRun.objects.create(
            batch=batch,
            mode=decision.mode,
            reason=decision.reason[:300],
            # Reused runs are fresh ones (serving._good_runs), never themselves reusing.
            reused_run=source,
            # The configuration the served findings were made under (for a cached run,
            # today's; for a failback run, possibly an older one).
            config_fingerprint=source.config_fingerprint,
            # ... and the dataset policy version they were made under.
            policy_version_id=source.policy_version_id,
            tier=source.tier,
            specialists=source.specialists,
            # A served run carries the statuses of the run it reuses (docs/history.md).
            baseline_run_id=source.baseline_run_id,
            resolved=source.resolved,
            suppressed=source.suppressed,
            standing=source.standing,
            health=source.health,
            team_rules=source.team_rules,
            status=ReviewRun.Status.DONE,
            as_of=batch.as_of or source.as_of,
            created_by=created_by,
            started_at=now,
            finished_at=now,
        )
        AgentRun.objects.bulk_create(
            AgentRun(
                run=run,
                agent=agent,
                status=AgentRun.Status.DONE,
                model=REUSED_MODEL,
                started_at=now,
                finished_at=now,
            )
            for agent in source.agents.values_list("agent", flat=True)
        )
        _copy_verdict(source, run)
    run_finished(run.pk)  # it is finished at once: alerts, after the commit
    return run


def _copy_verdict(source: ReviewRun, run: ReviewRun) -> None:
    verdict = getattr(source, "verdict", None)
    if verdict is None:
        return
    # Not the break-glass override: it was one person's call about that run.
    Verdict.objects.create(
        run=run,
        decision=verdict.decision,
        summary=verdict.summary,
        pipeline_at_risk=verdict.pipeline_at_risk,
        pipeline_by_currency=verdict.pipeline_by_currency,
    )
