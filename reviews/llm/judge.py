"""The model pass of one run, as plain functions the runner calls.

- staff_for_tier: which specialists get a model pass (trivial 2, lite 3, full 4).
- judge_specialist: one specialist's model pass over its slice; on failure the
  detector's findings stand and the result says why.
- judge_coordinator: the coordinator's pass (merge, re-categorise, drop, summary);
  returns None when there is nothing to call for, raises LLMError when the call fails,
  so the caller finishes with the rules coordinator (and marks the run degraded).
The verdict is never the model's: the caller applies the verdict policy
(docs/rules.md) to the final findings.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings

from reviews.engine.batch import Batch
from reviews.engine.findings import RawFinding, Severity
from reviews.engine.risk import SPECIALISTS_PER_TIER
from reviews.engine.rules import Rules
from reviews.engine.specialists import NAMES, SPECIALISTS
from reviews.llm import apply, context, roster
from reviews.llm.boundary import new_boundary, sanitize, to_json
from reviews.llm.chain import call_with_failback
from reviews.llm.config import enabled
from reviews.llm.errors import LLMError
from reviews.llm.schemas import CoordinatorReply, SpecialistReply

logger = logging.getLogger(__name__)

RULES_ONLY = "rules"  # AgentRun.model when no model judged


@dataclass(frozen=True, slots=True)
class RunContext:
    """What every model call of one run shares: the facts of the shared prompt block,
    the tier and the run's deadline."""

    run_id: int | None
    rules: Rules
    as_of: datetime
    counts: dict[str, int]
    tier: str = "full"
    deadline_at: float | None = None  # epoch seconds; no model call starts after it
    # The dataset's standing dismissals ({category, kind, title, reason}, newest first):
    # examples of what not to flag, in the shared block.
    dismissals: tuple[dict, ...] = ()

    @classmethod
    def for_run(cls, run) -> RunContext:
        """A ReviewRun's context: its deadline is RUN_DEADLINE_SECONDS after it started,
        in whichever task or process asks."""
        started = run.started_at.timestamp() if run.started_at else time.time()
        return cls(
            run.pk,
            settings.REVIEW_RULES,
            run.as_of,
            run.batch.counts,
            run.tier,
            started + int(settings.RUN_DEADLINE_SECONDS),
        )

    @classmethod
    def for_batch(cls, batch: Batch, rules: Rules, tier: str = "full") -> RunContext:
        """A context without a run (tests, tools): no deadline."""
        return cls(None, rules, batch.as_of, batch.counts, tier)

    @property
    def past_deadline(self) -> bool:
        return self.deadline_at is not None and time.time() >= self.deadline_at


@dataclass(slots=True)
class JudgeResult:
    findings: list[RawFinding]
    model_served: str | None  # None: no model judged (rules only, nothing to judge, failed)
    model_failed: bool = False  # the call was due and failed: the detector's findings stand
    dismissed: list[RawFinding] = field(default_factory=list)  # with the reason in detail
    error: str = ""
    refused: list[str] = field(default_factory=list)  # what the guards did not allow


@dataclass(slots=True)
class CoordinatorResult:
    findings: list[RawFinding]
    summary: str
    model_served: str
    refused: list[str] = field(default_factory=list)  # what the guards did not allow


def candidate_counts(batch: Batch, rules: Rules) -> dict[str, int]:
    """What each specialist's model pass would judge: its detector's findings and its
    near misses. A detector that fails counts 0."""
    counts: dict[str, int] = {}
    for name, module in SPECIALISTS.items():
        try:
            found = module.detect(batch, rules)
            near = module.near_misses(batch, rules, int(settings.LLM_NEAR_MISS_LIMIT))
        except Exception:  # the specialist's own task records the failure
            logger.exception("%s: counting candidates failed", name)
            counts[name] = 0
        else:
            counts[name] = len(found) + len(near)
    return counts


def staff_for_tier(tier: str, counts: Mapping[str, int]) -> list[str]:
    """The specialists that get a model pass: the tier's number, those with the most
    rule candidates first, ties in the canonical order. The detectors all run anyway."""
    ranked = sorted(NAMES, key=lambda name: (-counts.get(name, 0), NAMES.index(name)))
    return ranked[: SPECIALISTS_PER_TIER[tier]]


def judge_specialist(
    run_context: RunContext,
    agent: str,
    findings: list[RawFinding],
    near_misses: list[dict],
    batch: Batch,
) -> JudgeResult:
    if not enabled():
        return JudgeResult(list(findings), None)
    shared = _shared(run_context)
    boundary = new_boundary()
    # Everything but the items: the prompts, the payload's frame and the omitted note.
    overhead = context.estimate_tokens(
        shared + context.user_message([agent, "specialist"], context.Slice().payload(), boundary, 1)
    )
    budget = int(settings.LLM_CALL_TOKEN_BUDGET) - overhead
    task_slice = context.specialist_slice(agent, batch, findings, near_misses, budget)
    if task_slice.empty:
        if findings or near_misses:
            logger.warning("%s: nothing fits the token budget (%s); no model pass", agent, budget)
        return JudgeResult(list(findings), None)
    messages = context.specialist_messages(agent, shared, task_slice, boundary)
    try:
        result = call_with_failback(
            agent,
            roster.model_for(agent),
            messages,
            SpecialistReply,
            run_id=run_context.run_id,
            deadline_at=run_context.deadline_at,
        )
    except LLMError as error:
        logger.warning("%s: model pass failed, the detector's findings stand: %s", agent, error)
        return JudgeResult(list(findings), None, model_failed=True, error=str(error))
    applied = apply.apply_specialist_reply(agent, batch, findings, task_slice.refs, result.data)
    return JudgeResult(
        applied.findings,
        result.model_served,
        dismissed=applied.dismissed,
        refused=applied.refused,
    )


def judge_coordinator(
    run_context: RunContext,
    findings: list[RawFinding],
    failed_specialists: list[str] | None = None,
    batch: Batch | None = None,
) -> CoordinatorResult | None:
    """None without a gateway, or with no finding to judge (the rules' summary of a
    clean batch says all there is); raises LLMError if the call fails. `batch`, when
    given, lets the guards keep findings on records that instruct the reviewer."""
    if not enabled() or not findings:
        return None
    shared = _shared(run_context)
    boundary = new_boundary()
    failed = list(failed_specialists or [])
    frame = {"failed_specialists": failed, "findings": []}
    overhead = context.estimate_tokens(
        shared + context.user_message(["coordinator"], frame, boundary, 1)
    )
    payload, refs, omitted = _coordinator_payload(
        findings, failed, int(settings.LLM_CALL_TOKEN_BUDGET) - overhead
    )
    messages = [
        {"role": "system", "content": shared},
        {
            "role": "user",
            "content": context.user_message(["coordinator"], payload, boundary, omitted),
        },
    ]
    result = call_with_failback(
        "coordinator",
        roster.coordinator_model_for(run_context.tier),
        messages,
        CoordinatorReply,
        run_id=run_context.run_id,
        deadline_at=run_context.deadline_at,
    )
    instructing = apply.protected_records(batch, findings) if batch is not None else set()
    merged, summary, refused = apply.apply_coordinator_reply(
        findings, refs, result.data, instructing
    )
    return CoordinatorResult(merged, summary, result.model_served, refused)


def _shared(run_context: RunContext) -> str:
    return context.shared_context(
        run_context.as_of,
        run_context.counts,
        run_context.rules,
        run_context.dismissals,
        int(settings.LLM_CALL_TOKEN_BUDGET),
    )


def _coordinator_payload(
    findings: list[RawFinding], failed: list[str], budget: int
) -> tuple[dict, dict[str, int], int]:
    """The findings the coordinator judges, most severe first, within the budget; the
    ones left out pass through unchanged."""
    items: list[dict] = []
    refs: dict[str, int] = {}
    omitted = 0
    left = budget
    order = sorted(range(len(findings)), key=lambda i: Severity(findings[i].severity).rank)
    for i in order:
        finding = findings[i]
        ref = f"f{len(items) + 1}"
        item = {
            "ref": ref,
            "category": finding.category,
            "kind": finding.kind,
            "severity": finding.severity,
            "title": finding.title,
            "detail": finding.detail,
            "record_ids": finding.record_ids,
            "confidence": finding.confidence,
            "source": finding.source,
            "droppable": not context.is_exact(finding),
        }
        cost = context.estimate_tokens(to_json(sanitize(item)))
        if cost > left:
            omitted += 1
            continue
        left -= cost
        items.append(item)
        refs[ref] = i
    return {"failed_specialists": failed, "findings": items}, refs, omitted
