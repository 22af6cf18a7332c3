"""A proposal proven on the stored syncs (docs/history.md): the detectors it touches
re-run on each, under the current policy and with the proposal; what it would hide of
the dismissed and of the kept findings, and what it would add; per sync and in total
(distinct fingerprints)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from reviews.engine.batch import Batch
from reviews.engine.history.compare import fingerprint_of
from reviews.engine.history.observe import detect
from reviews.engine.history.policy import Policy
from reviews.engine.rules import Rules
from reviews.engine.specialists import KINDS, REGISTRY
from reviews.engine.team_rules import run as team_run

ADDED_SHOWN = 20  # findings a replay lists of those a proposal would add


def kinds_of(policy: Policy) -> set[str]:
    """The kinds whose findings `policy` can change: those it switches off or re-grades,
    and those whose detectors read a rule it sets."""
    return (
        set(policy.off)
        | set(policy.severity)
        | {
            kind.name
            for spec in REGISTRY.values()
            for kind in spec.kinds
            if set(kind.rules) & set(policy.rules)
        }
    )


def categories_of(policy: Policy) -> list[str]:
    """The specialists whose findings `policy` can change, and the team rules' category
    when it changes a kind the registry does not declare (a team rule's)."""
    kinds = kinds_of(policy)
    found = [
        category for category, spec in REGISTRY.items() if any(k.name in kinds for k in spec.kinds)
    ]
    return found + ([team_run.CATEGORY] if kinds - set(KINDS) else [])


def replay(
    batches: Iterable[Batch],
    rules: Rules,
    current: Policy,
    proposal: Policy,
    dismissed: Iterable[str],
) -> dict[str, Any]:
    """Re-run the detectors the proposal touches on each stored batch, under the current
    policy and under it with the proposal; count what the proposal hides and adds among
    the findings of the kinds it touches, so the replay's "kept" are the proposal's own
    explanation's (not every finding of the specialist)."""
    dismissed = set(dismissed)
    proposed = current.merged(proposal)
    categories = categories_of(proposal)
    kinds = kinds_of(proposal)
    per_sync = []
    seen_before: set[str] = set()
    hidden_all: set[str] = set()
    added_all: set[str] = set()
    examples: dict[str, dict[str, str]] = {}  # findings it would add, as the team sees them
    for number, batch in enumerate(batches, 1):
        before = {
            fingerprint_of(f) for f in detect(batch, rules, current, categories) if f.kind in kinds
        }
        made = {
            fingerprint_of(f): f
            for f in detect(batch, rules, proposed, categories)
            if f.kind in kinds
        }
        after = set(made)
        hidden, added = before - after, after - before
        for key in sorted(added - seen_before):
            if len(examples) < ADDED_SHOWN:
                found = made[key]
                examples.setdefault(
                    key, {"fingerprint": key, "kind": found.kind, "title": found.title}
                )
        per_sync.append(
            {
                "sync": number,
                "dismissed_hidden": len(hidden & dismissed),
                "dismissed_total": len(before & dismissed),
                "kept_hidden": len(hidden - dismissed),
                "kept_total": len(before - dismissed),
                "added": len(added),
            }
        )
        seen_before |= before
        hidden_all |= hidden
        added_all |= added - seen_before
    return {
        "dismissed_hidden": len(hidden_all & dismissed),
        "dismissed_total": len(seen_before & dismissed),
        "kept_hidden": len(hidden_all - dismissed),
        "kept_total": len(seen_before - dismissed),
        "added": len(added_all),
        "added_findings": list(examples.values()),
        "syncs": len(per_sync),
        "per_sync": per_sync,
    }


def hides_only_dismissed(result: Mapping[str, Any]) -> bool:
    """A replay that hides dismissed findings and nothing kept, and adds none."""
    return result["dismissed_hidden"] > 0 and not result["kept_hidden"] and not result["added"]
