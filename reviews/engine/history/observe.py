"""A stored sync as tuning reads it (docs/history.md): the findings the detectors give
it under a policy (the team's rules included), each with the value its kind measures
(`Seen`), for proposals (tune), replays (replay) and root causes (root_causes)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from reviews.engine.batch import Batch
from reviews.engine.findings import RawFinding
from reviews.engine.history.compare import fingerprint_of
from reviews.engine.history.policy import Policy, apply, rules_for
from reviews.engine.rules import Rules
from reviews.engine.specialists import KINDS, SPECIALISTS
from reviews.engine.specialists.spec import Measure
from reviews.engine.tables.build import build_tables
from reviews.engine.team_rules import run as team_run

# The kinds tuning can propose a threshold for, with the value their detector compares
# (each kind's declared `measure`). deal_entered_twice's ratio, amount tolerance and date
# window are never proposed: the kind is critical (policy.critical_rules), so tune
# refuses them.
MEASURES: dict[str, Measure] = {
    name: kind.measure for name, kind in KINDS.items() if kind.measure is not None
}


@dataclass(slots=True)
class Seen:
    """A finding of a stored sync, as tuning reads it."""

    fingerprint: str
    kind: str
    severity: str
    record_ids: tuple[str, ...]
    measure: int | Decimal | None = None


def detect(batch: Batch, rules: Rules, policy: Policy, categories: Iterable[str]) -> list:
    """The findings of `categories`' detectors on `batch` under `policy` (the team's
    rules under their category, team_run.CATEGORY)."""
    effective = rules_for(rules, policy)
    found: list[RawFinding] = []
    for category in categories:
        if category == team_run.CATEGORY:
            found += team_detect(batch, policy)
        else:
            found += SPECIALISTS[category].detect(batch, effective)
    return apply(found, policy)


def team_detect(batch: Batch, policy: Policy) -> list[RawFinding]:
    """The findings of the policy's team rules on `batch` (a rule that cannot run on it
    finds nothing here: the review reports it, tuning only counts what was found)."""
    if not policy.all_team_rules:
        return []
    findings, _report = team_run.team_findings(
        build_tables(batch),
        policy.all_team_rules,
        batch.as_of.date(),
        seconds=team_run.SECONDS,
        memory_mb=team_run.MEMORY_MB,
        absent=team_run.absent_lists(batch.partial, batch.source),
    )
    return findings


def all_categories(policy: Policy) -> list[str]:
    """Every specialist's category, and the team rules' when the policy has some."""
    return [*SPECIALISTS, *([team_run.CATEGORY] if policy.all_team_rules else [])]


def observe(batch: Batch, rules: Rules, policy: Policy) -> list[Seen]:
    """Every finding of the detectors on `batch` under `policy`, with its measured value."""
    effective = rules_for(rules, policy)
    measured = {kind: m.values(batch, effective) for kind, m in MEASURES.items()}
    seen = []
    for finding in detect(batch, rules, policy, all_categories(policy)):
        values = measured.get(finding.kind, {})
        group = ",".join(sorted(finding.record_ids))
        if group in values:
            measures = [values[group]]
        else:
            measures = [values[r] for r in finding.record_ids if r in values]
        seen.append(
            Seen(
                fingerprint_of(finding),
                finding.kind,
                finding.severity,
                tuple(finding.record_ids),
                max(measures) if measures else None,
            )
        )
    return seen
