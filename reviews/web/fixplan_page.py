"""The fix plan as a page (docs/output.md#the-fix-plan-page): the run's merges, then the
owners' tasks grouped by owner, each group in the fix-first order the engine gives
(reviews.engine.fixes.fixplan.fix_first: never sorted again here), every record linked
to its page in HubSpot when the run's portal is known. The downloads beside it are
reviews/reports/fixplan_export.py's, filtered the same way (`for_owner`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django.conf import settings
from django.core.paginator import Paginator

from reviews.engine.findings import Severity
from reviews.engine.fixes.fixplan import FixPlan, Merge, Task
from reviews.engine.fixes.links import RecordLinks
from reviews.engine.history.policy import kinds_of
from reviews.engine.specialists.spec import Kind
from reviews.reports.fixplan_export import for_owner

# An export of 300k records may give 180k tasks: the overview shows each owner's most
# urgent ones, an owner's own view a page at a time; the CSV holds them all.
PER_OWNER = 25
TASKS_PER_PAGE = 200
MERGES_SHOWN = 200


@dataclass(frozen=True, slots=True)
class RecordLink:
    id: str
    url: str  # "" when HubSpot has no page for it (no portal, or not a HubSpot id)


@dataclass(frozen=True, slots=True)
class TaskRow:
    task: Task
    rank: int  # its place in the whole to-do list, fix first (1: the most urgent)
    record: RecordLink
    survivor: RecordLink | None  # the record a merge keeps, when this one is merged away
    kind_label: str
    severity_label: str


@dataclass(frozen=True, slots=True)
class MergeRow:
    merge: Merge
    primary: RecordLink
    merged: list[RecordLink]
    kind_label: str


@dataclass(frozen=True, slots=True)
class OwnerGroup:
    owner: str  # "" for the tasks nobody owns
    total: int
    rows: list[TaskRow]  # the ones shown, in fix-first order


def kind_label(kind: str, kinds: Mapping[str, Kind]) -> str:
    """A kind by its label ("deal: won without an amount"); a kind with no declaration
    (a model's own) by its name in words."""
    declared = kinds.get(kind)
    return declared.phrase(settings.REVIEW_RULES) if declared else kind.replace("_", " ")


def severity_label(severity: str) -> str:
    try:
        return Severity(severity).label
    except ValueError:  # a severity this code does not know: its value, as it is
        return severity


def page_context(
    plan: FixPlan,
    links: RecordLinks,
    owner: str | None,
    page_number: str | None = None,
    kinds: Mapping[str, Kind] | None = None,
) -> dict:
    """What the page shows: every owner with a count (in the order their most urgent
    task comes), the merges, and the tasks grouped by owner; only `owner`'s when given
    ("" : the tasks nobody owns), a page at a time."""
    kinds = kinds if kinds is not None else kinds_of(None)

    def link(object_type: str, record_id: str) -> RecordLink:
        return RecordLink(record_id, links.url(object_type, record_id))

    ranks = {id(task): n for n, task in enumerate(plan.tasks, 1)}

    def row(task: Task) -> TaskRow:
        return TaskRow(
            task=task,
            rank=ranks[id(task)],
            record=RecordLink(task.record_id, task.url),
            survivor=link(task.object, task.merged_into) if task.merged_into else None,
            kind_label=kind_label(task.kind, kinds),
            severity_label=severity_label(task.severity),
        )

    by_owner: dict[str, list[Task]] = {}
    for task in plan.tasks:  # first seen first: the owner of the most urgent task leads
        by_owner.setdefault(task.owner or "", []).append(task)
    page = None
    if owner is None:
        groups = [
            OwnerGroup(name, len(tasks), [row(t) for t in tasks[:PER_OWNER]])
            for name, tasks in by_owner.items()
        ]
    else:
        tasks = for_owner(plan, owner).tasks
        page = Paginator(tasks, TASKS_PER_PAGE).get_page(page_number)
        groups = [OwnerGroup(owner, len(tasks), [row(t) for t in page.object_list])]
    merges = [
        MergeRow(
            merge=merge,
            primary=link(merge.object, merge.primary),
            merged=[link(merge.object, record_id) for record_id in merge.merge],
            kind_label=kind_label(merge.kind, kinds),
        )
        for merge in plan.merges[:MERGES_SHOWN]
    ]
    return {
        "owner": owner,
        "owners": [(name, len(tasks)) for name, tasks in by_owner.items()],
        "tasks_total": len(plan.tasks),
        "groups": groups,
        "tasks_page": page,
        "merges": merges,
        "merges_total": len(plan.merges),
        "per_owner": PER_OWNER,
        "links": links,
        "linked": any(t.url for t in plan.tasks) or any(m.primary.url for m in merges),
    }
