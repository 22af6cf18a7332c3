"""From findings to fixes (docs/output.md): for one run, a merge plan (every duplicate
finding: the survivor, the records to merge into it, why, and what the merge moves or
loses) and a to-do list (every other finding as a task on one record, with its owner,
the HubSpot property to fix and the money at risk). Plain functions over the parsed batch
and the run's findings; the caller leaves out what the team dismissed."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from reviews.engine.batch import Batch, Company, Contact, Deal, Lead
from reviews.engine.findings import Severity
from reviews.engine.fixes import survivor
from reviews.engine.fixes.fixtasks import PlanFinding, Task, records_by_type, task_of
from reviews.engine.fixes.hubspot_names import MERGE_FIELDS, property_name
from reviews.engine.fixes.links import NO_LINKS, RecordLinks
from reviews.engine.money import plain_amount
from reviews.engine.specialists import KINDS, REGISTRY
from reviews.engine.specialists.spec import Kind, Merges

__all__ = ["FixPlan", "Merge", "PlanFinding", "Task", "build", "plan_json"]

Record = Company | Contact | Deal
_SEVERITY_RANK = {s.value: s.rank for s in Severity}
# Extra fields a merge does not "lose": ids, dates HubSpot sets, association columns.
_NOT_COMPARED = {
    *survivor.CREATED_KEYS,
    *survivor.UPDATED_KEYS,
    "id",
    "hs_object_id",
    "Record ID",
    "companyName",
    "enrichedAt",
}


@dataclass(slots=True)
class Merge:
    object: str  # companies | contacts | deals (the CRM API's object type)
    primary: str  # the survivor
    merge: list[str]  # merged into it, in order
    reason: str
    fingerprint: str
    kind: str
    title: str
    # per merged record: {"from": id, "contacts": [...], "deals": [...], "companies": [...]}
    moves: list[dict[str, Any]] = field(default_factory=list)
    # {"record_id", "property", "value", "kept"}: values that differ from the survivor's
    loses: list[dict[str, str]] = field(default_factory=list)
    amount: Decimal | None = None
    currency: str = ""
    check: str = ""  # what to confirm first, for a duplicate found by likeness


@dataclass(slots=True)
class FixPlan:
    merges: list[Merge]
    tasks: list[Task]


def build(
    batch: Batch,
    findings: Iterable[PlanFinding],
    *,
    order: Sequence[str] = survivor.DEFAULT_ORDER,
    links: RecordLinks = NO_LINKS,
    kinds: Mapping[str, Kind] = KINDS,
) -> FixPlan:
    """The run's merge plan and to-do list. `findings` in the run's order (severity,
    then money); tasks come out fix-first (`fix_first`). `kinds`: the kinds by name,
    whose declarations say what is merged and where a task is."""
    merges: list[Merge] = []
    tasks: list[Task] = []
    ages: dict[int, datetime | None] = {}  # id(task) -> its finding's first_seen
    merged_into: dict[tuple[str, str], str] = {}  # (object, id) -> the id it merges into
    for finding in findings:
        merges_as = _merges_as(finding, kinds)
        if merges_as is not None:
            merge = _merge(batch, finding, merges_as, order, merged_into)
            if merge is not None:
                merges.append(merge)
                continue
        task = task_of(batch, finding, links=links, kinds=kinds)
        if task is not None:
            tasks.append(task)
            ages[id(task)] = finding.first_seen
    for task in tasks:  # a record the plan merges away is fixed on its survivor
        if (task.object, task.record_id) in merged_into:
            task.merged_into = _root(merged_into, task.object, task.record_id)
    tasks.sort(key=lambda t: fix_first(t.severity, t.amount, ages[id(t)]))
    return FixPlan(merges=merges, tasks=tasks)


_NEVER_SEEN = datetime.max.replace(tzinfo=UTC)


def fix_first(severity: str, amount: Decimal | None, first_seen: datetime | None) -> tuple:
    """The fix-first order of the to-do list, its CSV and the API (docs/output.md): the
    most severe first, then the most money at risk, then the oldest problem; then the
    run's order (the sort is stable). A critical without an amount comes before any
    warning, whatever the warning's amount."""
    return (_SEVERITY_RANK.get(severity, 9), -(amount or 0), first_seen or _NEVER_SEEN)


# --- merges ------------------------------------------------------------------------------


def _merges_as(finding: PlanFinding, kinds: Mapping[str, Kind]) -> Merges | None:
    """The merge a duplicate finding's kind declares, if the finding is still filed under
    a specialist that declares that kind: a model may re-file a finding, or name a kind of
    its own under another category, and those are tasks, not merges."""
    kind = kinds.get(finding.kind)
    if kind is None or kind.merge is None:
        return None
    spec = REGISTRY.get(finding.category)
    return kind.merge if spec is not None and kind in spec.kinds else None


def _merge(
    batch: Batch,
    finding: PlanFinding,
    merges_as: Merges,
    order: Sequence[str],
    merged_into: dict[tuple[str, str], str],
) -> Merge | None:
    object_type = merges_as.object
    index = records_by_type(batch)[object_type]
    present = [index[i] for i in dict.fromkeys(finding.record_ids) if i in index]
    if len(present) < 2:
        return None  # the records are not in the batch: nothing to merge here
    # A record an earlier merge of this plan merges away is represented by its survivor,
    # so overlapping findings (same domain, then same name) never merge a record twice.
    notes = []
    roots: dict[str, Record] = {}
    for record in present:
        root_id = _root(merged_into, object_type, record.id)
        if root_id != record.id:
            notes.append(f"{record.id} is already merged into {root_id} above")
        roots.setdefault(root_id, index[root_id])
    group = list(roots.values())
    if len(group) < 2:
        chosen, others = group[0], []
        reason = "nothing left to merge: " + "; ".join(notes)
    else:
        choice = survivor.choose(group, batch, order)
        chosen = choice.survivor
        others = [r for r in group if r is not chosen]
        reason = "; ".join([choice.reason, *notes])
    for record in others:
        merged_into[object_type, record.id] = chosen.id
    return Merge(
        object=object_type,
        primary=chosen.id,
        merge=[r.id for r in others],
        reason=reason,
        fingerprint=finding.fingerprint,
        kind=finding.kind,
        title=finding.title,
        moves=[m for r in others if (m := _moves(batch, chosen, r))],
        loses=[loss for r in others for loss in _losses(batch, object_type, chosen, r)],
        amount=finding.amount,
        currency=finding.currency,
        check=merges_as.check,
    )


def _root(merged_into: dict[tuple[str, str], str], object_type: str, record_id: str) -> str:
    while (object_type, record_id) in merged_into:
        record_id = merged_into[object_type, record_id]
    return record_id


def _moves(batch: Batch, keep: Record, gone: Record) -> dict[str, Any]:
    """The associations `gone` has and `keep` has not: HubSpot moves them to `keep`."""
    moves: dict[str, list[str]] = {}
    if isinstance(gone, Lead):
        return {}  # a lead is associated with nothing
    if isinstance(gone, Company):
        members = _company_members(batch)
        for kind in ("contacts", "deals"):
            mine = set(members[keep.id][kind])
            moved = [i for i in members[gone.id][kind] if i not in mine]
            if moved:
                moves[kind] = moved
    else:
        kept = set(survivor.companies_of(keep))
        companies = [c for c in survivor.companies_of(gone) if c not in kept]
        if companies:
            moves["companies"] = companies
        if isinstance(gone, Deal):
            contacts = [c for c in dict.fromkeys(gone.contact_ids) if c not in keep.contact_ids]
            if contacts:
                moves["contacts"] = contacts
        else:
            deals = _contact_deals(batch)
            mine = set(deals[keep.id])
            moved = [d for d in deals[gone.id] if d not in mine]
            if moved:
                moves["deals"] = moved
    return {"from": gone.id, **moves} if moves else {}


def _losses(batch: Batch, object_type: str, keep: Record, gone: Record) -> list[dict[str, str]]:
    """Values of `gone` that differ from the survivor's, which keeps its own. A value the
    survivor lacks is filled, not lost; a contact's other email stays as an extra email."""
    lost = []
    for attr, key in MERGE_FIELDS[object_type]:
        if object_type == "contacts" and attr == "email":
            continue  # HubSpot keeps the merged contact's email as an additional email
        mine, theirs = getattr(keep, attr), getattr(gone, attr)
        if _differs(mine, theirs):
            lost.append(_loss(gone.id, property_name(object_type, key), theirs, mine))
    kept = batch.extra_of(keep)
    for key, theirs in batch.extra_of(gone).items():
        if key in _NOT_COMPARED:
            continue
        mine = kept.get(key)
        if _differs(mine, theirs):
            lost.append(_loss(gone.id, key, theirs, mine))
    return lost


def _differs(mine: object, theirs: object) -> bool:
    if mine in (None, "") or theirs in (None, ""):
        return False
    return str(mine).strip().casefold() != str(theirs).strip().casefold()


def _loss(record_id: str, name: str, value: object, kept: object) -> dict[str, str]:
    return {"record_id": record_id, "property": name, "value": str(value), "kept": str(kept)}


def _company_members(batch: Batch) -> dict[str, dict[str, list[str]]]:
    def build(b: Batch) -> dict[str, dict[str, list[str]]]:
        members: dict[str, dict[str, list[str]]] = defaultdict(
            lambda: {"contacts": [], "deals": []}
        )
        for kind, records in (("contacts", b.contacts), ("deals", b.deals)):
            for record in records:
                for company_id in survivor.companies_of(record):
                    members[company_id][kind].append(record.id)
        return members

    return batch.derive("fixplan_company_members", build)


def _contact_deals(batch: Batch) -> dict[str, list[str]]:
    def build(b: Batch) -> dict[str, list[str]]:
        deals: dict[str, list[str]] = defaultdict(list)
        for deal in b.deals:
            for contact_id in dict.fromkeys(deal.contact_ids):
                deals[contact_id].append(deal.id)
        return deals

    return batch.derive("fixplan_contact_deals", build)


# --- as data -------------------------------------------------------------------------------


def merge_json(merge: Merge) -> dict[str, Any]:
    return {
        "object": merge.object,
        "primary": merge.primary,
        "merge": merge.merge,
        "reason": merge.reason,
        "fingerprint": merge.fingerprint,
        "kind": merge.kind,
        "title": merge.title,
        "moves": merge.moves,
        "loses": merge.loses,
        "amount": _number(merge.amount, merge.currency),
        "currency": merge.currency or None,
        "check": merge.check or None,
    }


def task_json(task: Task) -> dict[str, Any]:
    return {
        "object": task.object,
        "record_id": task.record_id,
        "owner": task.owner,
        "property": task.property,
        "problem": task.problem,
        "amount": _number(task.amount, task.currency),
        "currency": task.currency or None,
        "url": task.url or None,
        "kind": task.kind,
        "severity": task.severity,
        "fix": task.fix,
        "fingerprint": task.fingerprint,
        "merged_into": task.merged_into or None,
    }


def plan_json(plan: FixPlan) -> dict[str, list[dict[str, Any]]]:
    return {
        "merges": [merge_json(m) for m in plan.merges],
        "tasks": [task_json(t) for t in plan.tasks],
    }


def _number(value: Decimal | None, currency: str) -> int | float | None:
    """The amount as the CSV writes it (reviews.engine.money.plain_amount), as a number."""
    if value is None:
        return None
    text = plain_amount(value, currency)
    return float(text) if "." in text else int(text)
