"""A run's team rules (reviews.engine.team_rules): the rules of the policy version the
run recorded, run once over the batch's stored tables, sandboxed, in the coordinator's
step beside the specialists' findings. What each rule did (ran, with its count, or could
not run, and why) is kept on the run (ReviewRun.team_rules)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from reviews.engine.findings import RawFinding
from reviews.engine.history.compare import Baseline
from reviews.engine.history.policy import Policy
from reviews.engine.history.policy import apply as apply_policy
from reviews.engine.team_rules import run as team_run
from reviews.models import ReviewRun
from reviews.orchestration.store.tables import tables_for

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class TeamReview:
    findings: list[RawFinding] = field(default_factory=list)
    report: list[dict] = field(default_factory=list)  # one entry per rule (Outcome.as_dict)

    @property
    def could_not_run(self) -> list[dict]:
        return [entry for entry in self.report if entry["status"] == team_run.COULD_NOT_RUN]


def review_team_rules(run: ReviewRun, policy: Policy) -> TeamReview:
    """The team rules' findings on the run's batch, under the policy's filter (a team
    kind switched off or given another severity). Never raises for a rule: a batch whose
    tables cannot be read reports every rule as could not run, with why."""
    if not policy.all_team_rules:
        return TeamReview()
    try:
        tables = tables_for(run.batch)
        findings, report = team_run.team_findings(
            tables,
            policy.all_team_rules,
            run.as_of.date(),
            seconds=settings.TEAM_RULE_SECONDS,
            memory_mb=settings.TEAM_RULE_MEMORY_MB,
            # The coordinator fuses, compares and writes after them, in the same task:
            # the rules get a third of its soft limit, whatever their number.
            total_seconds=settings.COORDINATOR_SOFT_TIME_LIMIT / 3,
            absent=team_run.absent_lists(run.batch.partial, run.batch.source),
        )
    except SoftTimeLimitExceeded:  # the task's own limit: not a rule's, not the tables'
        raise
    except Exception as error:  # the tables, not a rule: every rule is unanswered
        logger.exception("run %s: the team rules' tables could not be read", run.pk)
        why = f"the batch's tables could not be read ({type(error).__name__})"
        report = [
            {**team_run.Outcome(rule, team_run.COULD_NOT_RUN).as_dict(), "why": why}
            for rule in policy.all_team_rules
        ]
        return TeamReview(report=report)
    return TeamReview(apply_policy(findings, policy), report)


def unchecked_kinds(team: TeamReview, policy: Policy, baseline: Baseline | None) -> set[str]:
    """The kinds this run did not look for, whose open problems it calls none resolved
    (docs/history.md), like a kind a partial export switched off: a team rule that
    could not run, a kind the policy switched off, a team rule it no longer has."""
    kept = {rule.id for rule in policy.all_team_rules}
    removed = {
        past.kind
        for past in (baseline.findings.values() if baseline else ())
        if past.category == team_run.CATEGORY and past.kind not in kept
    }
    return {entry["id"] for entry in team.could_not_run} | set(policy.off) | removed


def summary_sentence(report: list[dict]) -> str:
    """The summary's sentence on team rules that could not run, '' when all ran."""
    missed = [entry for entry in report if entry["status"] == team_run.COULD_NOT_RUN]
    if not missed:
        return ""
    listed = "; ".join(f"{entry['id']} ({entry['why']})" for entry in missed)
    rules = "1 team rule" if len(missed) == 1 else f"{len(missed):,} team rules"
    return (
        f"{rules} could not run on this batch: {listed}. What they would find is unknown, "
        "not passed: the verdict is no more lenient than they could have made it."
    )
