"""Tuning a dataset's policy from its own history (docs/history.md), on plain data.

- `propose`: for each kind the team keeps dismissing (at least MIN_DISMISSALS dismissed
  and a dismissal rate of at least MIN_DISMISSAL_RATE), the policy change that explains
  the dismissals: the threshold value separating dismissed findings from kept ones
  (where the kind declares the value its detector compares, its `measure`), else the
  rule off (every finding dismissed) or a lower severity. Never a change to a kind that
  can be critical or to a threshold such a kind reads.
- `replay`: a proposal re-run over stored syncs: dismissed hidden / total, kept hidden /
  total, findings it would add; per sync and in total (distinct fingerprints).
- `root_causes`: kinds that keep coming back as new, grouped by record source, owner and
  pipeline; a group holding most of them is named, with the HubSpot setting to change.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from reviews.engine.batch import Batch
from reviews.engine.findings import RawFinding, Severity
from reviews.engine.history.compare import fingerprint_of
from reviews.engine.history.policy import (
    EMPTY,
    Policy,
    apply,
    critical_kinds,
    critical_rules,
    rules_for,
)
from reviews.engine.history.thresholds import ageing_per_sync, as_text, midpoint, roundest
from reviews.engine.rules import Rules
from reviews.engine.specialists import KINDS, REGISTRY, SPECIALISTS
from reviews.engine.specialists.spec import Measure
from reviews.engine.tables.build import build_tables
from reviews.engine.team_rules import run as team_run

# Thresholds of tuning itself (docs/history.md), Rules-like constants.
MIN_DISMISSALS = 5  # a kind needs at least this many dismissed findings for a proposal
MIN_DISMISSAL_RATE = Decimal("0.5")  # ... and this share of its findings dismissed
ROOT_CAUSE_MIN_SYNCS = 2  # a kind new in at least this many syncs keeps coming back
ROOT_CAUSE_MIN_SHARE = Decimal("0.5")  # a group holding more than this share is named
ROOT_CAUSE_MIN_LIFT = Decimal("1.5")  # ... if its share of the findings is at least this
# many times its share of all records with the field (a value every record has is no cause)
ROOT_CAUSE_FIELDS = ("record_source", "owner", "pipeline")
ADDED_SHOWN = 20  # findings a replay lists of those a proposal would add


# The kinds tuning can propose a threshold for, with the value their detector compares
# (each kind's declared `measure`). deal_entered_twice's ratio, amount tolerance and date
# window are never proposed: the kind is critical (policy.critical_rules), so _threshold
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


# --- observing stored syncs --------------------------------------------------------------


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


# --- proposals ----------------------------------------------------------------------------


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


# --- replay ----------------------------------------------------------------------------------


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


# --- root causes ----------------------------------------------------------------------------

ADVICE: dict[str, str] = {
    "record_source": (
        "check that source's duplicate prevention (a form's 'pre-populate and deduplicate' / "
        "the integration's field mapping and its 'create or update' matching on email or domain)"
    ),
    "owner": "review that owner's entry habits; make the property required on the record's form",
    "pipeline": "make the property required on that pipeline's stages (Pipeline settings > "
    "stage properties)",
}


def root_causes(
    new_by_sync: Sequence[Sequence[tuple[str, Sequence[str]]]],
    records: Mapping[str, Mapping[str, str]],
    *,
    fields: Sequence[str] = ROOT_CAUSE_FIELDS,
) -> list[dict[str, Any]]:
    """`new_by_sync`: per sync, its new findings as (kind, record ids); `records`: record
    id -> {field: value}, every record of the syncs. For each kind new in at least
    ROOT_CAUSE_MIN_SYNCS syncs, the field value holding more than ROOT_CAUSE_MIN_SHARE of
    its findings and ROOT_CAUSE_MIN_LIFT times its share of the records, largest first."""
    population: dict[str, Counter[str]] = {name: Counter() for name in fields}
    for values in records.values():
        for name in fields:
            if values.get(name):
                population[name][values[name]] += 1
    syncs_of: Counter[str] = Counter()
    by_kind: dict[str, list[Sequence[str]]] = {}
    for sync in new_by_sync:
        for kind in {kind for kind, _ in sync}:
            syncs_of[kind] += 1
        for kind, ids in sync:
            by_kind.setdefault(kind, []).append(ids)
    causes = []
    for kind, found in by_kind.items():
        if syncs_of[kind] < ROOT_CAUSE_MIN_SYNCS:
            continue
        for name in fields:
            counts: Counter[str] = Counter()
            for ids in found:
                values = {records.get(i, {}).get(name) for i in ids} - {None, ""}
                for value in values:
                    counts[value] += 1
            if not counts:
                continue
            value, count = counts.most_common(1)[0]
            share = Decimal(count) / len(found)
            base = Decimal(population[name][value]) / max(sum(population[name].values()), 1)
            if share > ROOT_CAUSE_MIN_SHARE and share >= ROOT_CAUSE_MIN_LIFT * base:
                causes.append(
                    {
                        "kind": kind,
                        "field": name,
                        "value": value,
                        "count": count,
                        "total": len(found),
                        "syncs": syncs_of[kind],
                        "share": float(round(share, 3)),
                        "advice": ADVICE[name],
                        "text": f"{count} of {len(found)} {kind} findings in the last "
                        f"{len(new_by_sync)} syncs came from {name.replace('_', ' ')} {value}",
                    }
                )
    causes.sort(key=lambda c: (-c["count"], -c["share"], c["kind"], c["field"]))
    return causes


def record_fields(batch: Batch) -> dict[str, dict[str, str]]:
    """record id -> {record_source, owner, pipeline} as the batch holds them: the
    records' fields (owner, record_source, record_source_detail) where the reader keeps
    them, else their extra columns."""
    found: dict[str, dict[str, str]] = {}
    for name in ("companies", "contacts", "deals"):
        for record in getattr(batch, name):
            extra = batch.extra_of(record)
            source = (
                getattr(record, "record_source", None)
                or extra.get("record_source")
                or extra.get("hs_object_source")
            )
            detail = getattr(record, "record_source_detail", None) or extra.get(
                "record_source_detail"
            )
            values = {
                # "INTEGRATION / ZoomInfo": the source with its detail, as HubSpot shows it
                "record_source": f"{source} / {detail}" if source and detail else source,
                "owner": getattr(record, "owner", None)
                or extra.get("owner")
                or extra.get("hubspot_owner_id"),
                "pipeline": getattr(record, "pipeline", None) or extra.get("pipeline"),
            }
            values = {k: str(v) for k, v in values.items() if v}
            if values:
                found[record.id] = values
    return found


def new_by_sync(
    observed: Sequence[Sequence[Seen]],
) -> list[list[tuple[str, tuple[str, ...]]]]:
    """Per sync, the findings not in the sync before it, as (kind, record ids)."""
    found, before = [], set()
    for sync in observed:
        found.append([(s.kind, s.record_ids) for s in sync if s.fingerprint not in before])
        before = {s.fingerprint for s in sync}
    return found
