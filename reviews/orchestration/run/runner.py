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

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from alerts.tasks import run_finished
from ledger import budget
from reviews.engine import coordinator, coverage
from reviews.engine.batch import Batch as ParsedBatch
from reviews.engine.findings import RawFinding
from reviews.engine.gcpause import no_cyclic_gc
from reviews.engine.health import health_score
from reviews.engine.history import compare as history
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
from reviews.engine.storable import storable, storable_tree
from reviews.engine.vocabulary import HUBSPOT, crm_of
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
from reviews.orchestration.dataset import baselines, policies
from reviews.orchestration.dataset.dismissals import prompt_dismissals
from reviews.orchestration.run import handoff, limits
from reviews.orchestration.run.findings_store import storable_amount, write_findings
from reviews.orchestration.run.heartbeat import beating
from reviews.orchestration.run.team_rules import (
    review_team_rules,
    summary_sentence,
    unchecked_kinds,
)
from reviews.orchestration.serving import decide as serving
from reviews.orchestration.store import tables
from reviews.orchestration.store.parsed import forget_parsed, load_parsed

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


def coordinate(run_id: int) -> None:
    """Fuse the specialists' findings, have the coordinator model judge them if the run
    allows it, store findings and verdict, finish the run."""
    run = ReviewRun.objects.filter(pk=run_id).select_related("batch").first()
    if run is None or run.status in (ReviewRun.Status.DONE, ReviewRun.Status.FAILED):
        return
    if not specialists_finished(run_id):
        # Sent early (by a duplicate dispatch): the last specialist to finish sends it
        # again, and the sweep retries or fails any specialist whose worker died.
        logger.info("run %s: specialists still at work; the coordinator waits", run_id)
        return
    token = claim_agent(run_id, AgentRun.COORDINATOR)
    if token is None:  # a redelivered coordinator: the first one has it (or had it)
        logger.info("run %s: the coordinator is already under way", run_id)
        return
    # No cyclic collection while 180k findings are fused, compared and written: they
    # make no cycles, and the collector's passes over them are pure cost.
    with beating(run_id, AgentRun.COORDINATOR), no_cyclic_gc():
        _coordinate(run)


def _coordinate(run: ReviewRun) -> None:
    run_id = run.pk
    # The team's rules: one sandboxed query each over the batch's tables (read before the
    # parsed batch goes: tables not kept yet are built from it).
    team = review_team_rules(run, policies.of_version(run.policy_version))
    if not models_allowed(run):
        # The rules coordinator reads no record: the run's parsed batch, kept for its
        # specialists, goes before their findings are unpacked, fused and written.
        forget_parsed(run.batch_id)
    agents = {a.agent: a for a in run.agents.all()}
    failed = [name for name in NAMES if agents[name].status != AgentRun.Status.DONE]
    findings = [
        finding
        for name in NAMES
        if agents[name].status == AgentRun.Status.DONE
        for finding in handoff.received_findings(run_id, name, agents[name].packed_findings)
    ] + team.findings
    counts = run.batch.counts
    crm = crm_of(run.batch.source)  # the summary in its words: Accounts, Opportunities
    review = coordinator.fuse(findings, counts, failed, crm)
    # Dataset history: the team's dismissed problems are set aside before anything
    # judges or counts them (docs/history.md).
    context = baselines.history_context(run)
    suppressed: list[RawFinding] = []
    if context and context.dismissed:
        kept, suppressed = history.split_suppressed(review.findings, context.dismissed)
        if suppressed:
            review = coordinator.fuse(kept, counts, failed, crm)
    model, note, degraded, refused = RULES_ONLY, "", bool(failed), []
    if models_allowed(run):
        try:
            # The parsed batch (kept in this process when a specialist ran here) lets
            # the guards see which records instruct the reviewer.
            parsed = load_parsed(run.batch) if review.findings else None
            judged = judge_coordinator(run_context(run), review.findings, failed, parsed)
        except Exception as error:  # LLMError, the soft time limit, or a bug
            if not isinstance(error, LLMError):
                logger.exception("run %s: the coordinator's model pass broke off", run_id)
            # The rules coordinator's review stands, on every specialist's findings: not
            # degraded (docs/output.md: a verdict reached without a specialist), but noted, and
            # a run with a note is never served from the cache.
            note = f"no model judgement ({error!r}); the rules coordinator finished the run"
            review.summary += (
                " The coordinator's model review failed, so the rules coordinator wrote "
                "this review."
            )
        else:
            if judged is not None:
                review = judged_review(judged, counts, failed, review.findings, crm)
                model, refused = judged.model_served, judged.refused
    switched = coverage.switched_off_of(run.batch.missing_columns)
    baseline = context.baseline if context else None
    # Kinds not looked for (columns or a list missing, a rule that could not run, a kind
    # switched off or a rule removed): their open problems are not resolved.
    not_run = coverage.lists_not_run(run.batch.partial, run.batch.source)
    unchecked = {*switched, *(entry["kind"] for entry in not_run)} | unchecked_kinds(
        team, policies.of_version(run.policy_version), baseline
    )
    comparison = history.compare(
        review.findings,
        suppressed,
        baseline,
        run.as_of,
        context.dismissed if context else None,
        unchecked=unchecked,
    )
    if context:
        scope = policies.of_version(run.policy_version).verdict_scope or context.verdict_scope
        review = history.apply_scope(review, comparison, scope)
    # Whatever decided it (the rules, a model, the dataset's scope), a verdict reached
    # without a specialist is never `approve`, and one without a column a rule reads is
    # never more lenient than that rule could have made it.
    review.decision = coordinator.not_clean_when_degraded(review.decision, failed)
    if team.could_not_run:  # what a rule would find is unknown, not passed
        unknown = {entry["severity"] for entry in team.could_not_run}
        review.decision = coordinator.not_greener_when_partial(review.decision, unknown)
        review.summary = f"{review.summary} {summary_sentence(team.report)}"
    if switched:
        policy = policies.of_version(run.policy_version)
        coverage.partial_review(review, run.batch.missing_columns, policy, settings.REVIEW_RULES)
    save_review(
        run,
        review,
        comparison,
        degraded=degraded,
        coordinator_model=model,
        coordinator_note=note,
        coordinator_refused=refused,
        team_rules=team.report,
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
    judged: CoordinatorResult,
    counts: dict[str, int],
    failed: list[str],
    rules_findings: list[RawFinding],
    crm: str = HUBSPOT,
) -> coordinator.Review:
    """The coordinator model's findings, ordered and totalled as the rules coordinator
    orders them, with the model's summary (the rules' own when the guards refused it).
    The verdict follows the policy in docs/rules.md on these findings (coordinator.decide,
    inside fuse), never the model's, and is never more lenient than the rules' verdict
    on `rules_findings` with every one demoted."""
    review = coordinator.fuse(judged.findings, counts, failed, crm)
    review.decision = coordinator.no_more_lenient(review.decision, rules_findings)
    if judged.summary:
        review.summary = judged.summary
    if failed:  # stated whatever the model wrote
        review.summary += (
            f" Degraded: the {', '.join(failed)} review failed, so this verdict was reached "
            "without it."
        )
    return review


# numeric(18, 2): each amount is bounded at ingest, but a sum over many deals need not be.
def save_review(
    run: ReviewRun,
    review: coordinator.Review,
    comparison: history.Comparison,
    *,
    degraded: bool,
    coordinator_model: str = RULES_ONLY,
    coordinator_note: str = "",
    coordinator_refused: list[str] | None = None,
    team_rules: list[dict] | None = None,
) -> None:
    # What the tables say beside the findings: the dataset page's stages and fill rates.
    deal_stages = tables.profile_of(run.batch)
    now = timezone.now()
    with transaction.atomic():
        run.findings.all().delete()  # a redelivered coordinator replaces, never duplicates
        write_findings(run.pk, [m.finding for m in comparison.findings], comparison.findings)
        Verdict.objects.update_or_create(
            run=run,
            defaults={
                "decision": review.decision,
                "summary": storable(review.summary),  # it quotes record text
                "pipeline_at_risk": storable_amount(review.pipeline_at_risk),
                "pipeline_by_currency": {
                    code: str(amount) for code, amount in review.pipeline_by_currency.items()
                },
            },
        )
        AgentRun.objects.filter(run=run, agent=AgentRun.COORDINATOR).update(
            status=AgentRun.Status.DONE,
            model=coordinator_model,
            error=coordinator_note[:2000],
            refused=coordinator_refused or [],
            finished_at=now,
        )
        ReviewRun.objects.filter(pk=run.pk).update(
            status=ReviewRun.Status.DONE,
            degraded=degraded,
            finished_at=now,
            resolved=storable_tree(comparison.resolved)[0],
            suppressed=storable_tree([history.suppressed_entry(m) for m in comparison.suppressed])[
                0
            ],
            standing=baselines.standing_of(run, comparison, deal_stages),
            team_rules=storable_tree(team_rules or [])[0],
            health=health_score(
                sum(run.batch.counts.values()), (m.finding for m in comparison.findings)
            ),
        )
    budget.release_run(run.pk)  # what its calls did not use goes back to the day
    run_finished(run.pk)  # alerts, after the commit


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
