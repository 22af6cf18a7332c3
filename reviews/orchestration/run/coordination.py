"""The coordinator's step of a review run: the specialists' findings fused with the
team's rules, judged by the coordinator model when the run allows one, compared with the
dataset's last sync, and stored with the verdict. A redelivered coordinator writes
nothing twice (claim_agent), and one sent before the last specialist finished waits."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from alerts.tasks import run_finished
from ledger import budget
from reviews.engine import coordinator, coverage
from reviews.engine.findings import RawFinding
from reviews.engine.gcpause import no_cyclic_gc
from reviews.engine.health import health_score
from reviews.engine.history import compare as history
from reviews.engine.specialists import NAMES
from reviews.engine.storable import storable, storable_tree
from reviews.engine.vocabulary import HUBSPOT, crm_of
from reviews.llm.errors import LLMError
from reviews.llm.judge import RULES_ONLY, CoordinatorResult, judge_coordinator
from reviews.models import AgentRun, ReviewRun, Verdict
from reviews.orchestration.dataset import baselines, policies
from reviews.orchestration.run import handoff
from reviews.orchestration.run.findings_store import storable_amount, write_findings
from reviews.orchestration.run.heartbeat import beating
from reviews.orchestration.run.runner import (
    claim_agent,
    models_allowed,
    run_context,
    specialists_finished,
)
from reviews.orchestration.run.team_rules import (
    review_team_rules,
    summary_sentence,
    unchecked_kinds,
)
from reviews.orchestration.store import tables
from reviews.orchestration.store.parsed import forget_parsed, load_parsed

logger = logging.getLogger(__name__)


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
