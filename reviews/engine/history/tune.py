"""Proposals from a dataset's own history (docs/history.md), on plain data: for each
kind the team keeps dismissing (at least MIN_DISMISSALS dismissed and a dismissal rate
of at least MIN_DISMISSAL_RATE), the policy change that explains the dismissals: the
threshold value separating dismissed findings from kept ones (where the kind declares
the value its detector compares, its `measure`), else the rule off (every finding
dismissed) or a lower severity. Never a change to a kind that can be critical or to a
threshold such a kind reads.

The syncs are read by observe (Seen), a proposal proven by replay, and the kinds that
keep coming back explained by root_causes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from reviews.engine.findings import Severity
from reviews.engine.history.observe import MEASURES, Seen
from reviews.engine.history.policy import EMPTY, Policy, critical_kinds, critical_rules
from reviews.engine.history.thresholds import ageing_per_sync, as_text, midpoint, roundest
from reviews.engine.rules import Rules

# Thresholds of tuning itself (docs/history.md), Rules-like constants.
MIN_DISMISSALS = 5  # a kind needs at least this many dismissed findings for a proposal
MIN_DISMISSAL_RATE = Decimal("0.5")  # ... and this share of its findings dismissed


@dataclass(slots=True)
class Proposal:
    kind: str
    policy: Policy
    why: str
    dismissed: int
    total: int
    replay: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        data = self.policy.to_data()
        parts = [f"{k}={v}" for k, v in data["rules"].items()]
        parts += [f"off:{k}" for k in data["off"]]
        parts += [f"{k}:{v}" for k, v in data["severity"].items()]
        return f"{self.kind}:" + ",".join(parts)

    def as_dict(self) -> dict[str, Any]:
        data = self.policy.to_data()
        policy: dict[str, Any] = dict(data["rules"])
        policy |= {f"{kind}.enabled": False for kind in data["off"]}
        policy |= {f"{kind}.severity": sev for kind, sev in data["severity"].items()}
        return {
            "id": self.id,
            "kind": self.kind,
            "policy": policy,
            "why": self.why,
            "dismissed": self.dismissed,
            "findings": self.total,
            "replay": {k: v for k, v in self.replay.items() if k != "per_sync"}
            | {"per_sync": self.replay.get("per_sync", [])},
        }


def propose(
    syncs: Sequence[Sequence[Seen]], dismissed: Iterable[str], current: Policy = EMPTY
) -> list[Proposal]:
    """Proposals for the kinds the team keeps dismissing. `syncs`: each stored sync's
    findings (oldest first); `dismissed`: the fingerprints the team dismissed."""
    dismissed = set(dismissed)
    latest: dict[str, Seen] = {}
    measures: dict[str, list] = {}  # fingerprint -> its measured value in each sync
    for sync in syncs:
        for seen in sync:
            latest[seen.fingerprint] = seen
            if seen.measure is not None:
                measures.setdefault(seen.fingerprint, []).append(seen.measure)
    by_kind: dict[str, list[Seen]] = {}
    for seen in latest.values():
        by_kind.setdefault(seen.kind, []).append(seen)
    guarded = critical_kinds()
    proposals = []
    for kind, items in sorted(by_kind.items()):
        if kind in guarded or kind in current.off:
            continue
        gone = [s for s in items if s.fingerprint in dismissed]
        kept = [s for s in items if s.fingerprint not in dismissed]
        if len(gone) < MIN_DISMISSALS or Decimal(len(gone)) / len(items) < MIN_DISMISSAL_RATE:
            continue
        proposal = _threshold(kind, gone, kept, measures) or _quieter(kind, gone, kept, current)
        if proposal is not None:
            proposals.append(proposal)
    return proposals


def _threshold(
    kind: str, gone: list[Seen], kept: list[Seen], measures: Mapping[str, list]
) -> Proposal | None:
    """A value separating the dismissed findings from the kept ones with the widest
    margin it can: the roundest number near the midpoint between the largest dismissed
    measure (below every kept one, in every sync) and the smallest kept one; for an age,
    after allowing for the records ageing until the next sync. Findings measuring at most
    the largest dismissed are hidden, no kept one is."""
    measure = MEASURES.get(kind)
    if measure is None or measure.rule in critical_rules():
        return None
    gone_values = sorted(v for s in gone for v in measures.get(s.fingerprint, ()))
    kept_values = sorted(v for s in kept for v in measures.get(s.fingerprint, ()))
    if not gone_values:
        return None
    limit = gone_values[-1]
    if kept_values and kept_values[0] <= limit:
        below = [v for v in gone_values if v < kept_values[0]]
        if not below:
            return None
        limit = below[-1]
    hidden = sum(1 for s in gone if min(measures.get(s.fingerprint, [limit + 1])) <= limit)
    above = Decimal(kept_values[0]) if kept_values and kept_values[0] > limit else None
    whole = isinstance(getattr(Rules(), measure.rule), int)
    low, ageing = Decimal(limit), Decimal(0)
    if measure.ages:  # a dismissed record is older at the next sync: leave it room
        ageing = ageing_per_sync(measures.get(s.fingerprint, ()) for s in [*gone, *kept])
        if above is None or low + ageing < above:
            low += ageing
        else:
            ageing = Decimal(0)  # no room between the dismissed and the kept for it
    # A finding when value >= rule (inclusive): the rule goes past the limit, up to the
    # smallest kept; else (value > rule) from the limit to below the smallest kept.
    dismissed = f"the largest dismissed ({limit}" + (
        f", plus {as_text(ageing)} for the records' ageing until the next sync)" if ageing else ")"
    )
    if above is None:  # nothing kept above: the roundest number just past the dismissed
        value = roundest(low, None, past_low=measure.inclusive, whole=whole)
        how = f"the roundest number just past {dismissed}"
    else:
        value = midpoint(low, above, past_low=measure.inclusive, whole=whole)
        how = (
            f"the roundest number near the midpoint {as_text((low + above) / 2)} between "
            f"{dismissed} and the smallest kept ({kept_values[0]}), so both keep a margin"
        )
    if value is None:  # kept and dismissed too close for a whole number or a hundredth
        return None
    try:
        Rules().with_overrides({measure.rule: value})
    except ValueError:
        return None
    why = (
        f"{hidden} of {len(gone)} dismissed {kind} findings measure at most {limit} "
        f"({measure.rule}); of the {len(kept)} kept, "
        + (f"the smallest measures {kept_values[0]}" if kept_values else "none is measured")
        + f". {value} is {how}"
    )
    return Proposal(
        kind, Policy(rules={measure.rule: value}), why, len(gone), len(gone) + len(kept)
    )


def _quieter(kind: str, gone: list[Seen], kept: list[Seen], current: Policy) -> Proposal | None:
    total = len(gone) + len(kept)
    if not kept:
        why = f"all {total} {kind} findings were dismissed"
        return Proposal(kind, Policy(off=frozenset({kind})), why, len(gone), total)
    severities = [s.value for s in Severity]
    worst = min((Severity(s.severity) for s in gone), key=lambda s: s.rank)
    lower = severities[min(worst.rank + 1, len(severities) - 1)]
    if lower == worst or current.severity.get(kind) == lower:
        return None
    why = f"{len(gone)} of {total} {kind} findings were dismissed; lower it to {lower}"
    return Proposal(kind, Policy(severity={kind: lower}), why, len(gone), total)
