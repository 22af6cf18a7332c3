"""The fix plan as files a person uses at once (docs/output.md): CSV with HubSpot's
`Record ID` column first (one record id per row, as HubSpot exports and imports it) and
HubSpot's internal property names, and JSON. The run page, the API and the CLI share
these writers; cells are made spreadsheet-safe as the findings CSV's are."""

from __future__ import annotations

import csv
from collections.abc import Iterator

from reviews.engine.fixes.fixplan import FixPlan, Merge, plan_json
from reviews.engine.fixes.fixtasks import Task
from reviews.engine.fixes.salesforce_merges import MERGEABLE, MergeRequest, merge_requests
from reviews.engine.money import plain_amount
from reviews.reports.exports import safe_cell

KINDS = ("merges", "tasks")
# CSV only: the merge plan as Salesforce's merge takes it (salesforce_merges.py).
SALESFORCE_MERGES = "salesforce-merges"
CSV_KINDS = (*KINDS, SALESFORCE_MERGES)
NOT_MERGEABLE = "no: Salesforce merges Accounts, Contacts and Leads only"
SALESFORCE_MERGE_COLUMNS = (
    "MasterRecordId",
    "RecordToMergeId1",
    "RecordToMergeId2",
    "ObjectType",
    "merge_in_salesforce",
    "reason",
    "fingerprint",
)
RECORD_ID = "Record ID"  # HubSpot's own header for hs_object_id, in exports and imports
MERGE_COLUMNS = (
    RECORD_ID,
    "object",
    "merge",
    "reason",
    "check",
    "moves",
    "loses",
    "kind",
    "title",
    "amount",
    "currency",
    "fingerprint",
)
TASK_COLUMNS = (
    RECORD_ID,
    "object",
    "owner",
    "property",
    "problem",
    "amount",
    "currency",
    "url",
    "kind",
    "severity",
    "fix",
    "merged_into",
    "fingerprint",
)


class _Echo:
    def write(self, value: str) -> str:
        return value


def csv_lines(plan: FixPlan, kind: str) -> Iterator[str]:
    """One header line, then one line per merge (its survivor in `Record ID`, the
    records merged into it in `merge`, joined by ";" as HubSpot joins ids), per task, or
    (salesforce-merges) per Salesforce merge request: the master, then one or two ids."""
    writer = csv.writer(_Echo())
    if kind == SALESFORCE_MERGES:
        yield writer.writerow(SALESFORCE_MERGE_COLUMNS)
        for request in merge_requests(plan.merges):
            yield writer.writerow(_salesforce_row(request))
    elif kind == "merges":
        yield writer.writerow(MERGE_COLUMNS)
        for merge in plan.merges:
            yield writer.writerow(_merge_row(merge))
    else:
        yield writer.writerow(TASK_COLUMNS)
        for task in plan.tasks:
            yield writer.writerow(_task_row(task))


def _salesforce_row(request: MergeRequest) -> list:
    merged = [safe_cell(rid) for rid in request.merged] + [""] * (2 - len(request.merged))
    return [
        safe_cell(request.master),
        *merged,
        request.sobject,
        "yes" if request.sobject in MERGEABLE else NOT_MERGEABLE,
        safe_cell(request.reason),
        request.fingerprint,
    ]


def _merge_row(merge: Merge) -> list:
    moves = "; ".join(
        f"{move['from']}: "
        + ", ".join(f"{k} {' '.join(v)}" for k, v in move.items() if k != "from")
        for move in merge.moves
    )
    loses = "; ".join(
        f"{loss['record_id']}.{loss['property']} = {loss['value']} (kept: {loss['kept']})"
        for loss in merge.loses
    )
    return [
        safe_cell(merge.primary),
        merge.object,
        safe_cell(";".join(merge.merge)),
        safe_cell(merge.reason),
        merge.check,
        safe_cell(moves),
        safe_cell(loses),
        merge.kind,
        safe_cell(merge.title),
        "" if merge.amount is None else plain_amount(merge.amount, merge.currency),
        merge.currency,
        merge.fingerprint,
    ]


def _task_row(task: Task) -> list:
    return [
        safe_cell(task.record_id),
        task.object,
        safe_cell(task.owner or ""),
        task.property,
        safe_cell(task.problem),
        "" if task.amount is None else plain_amount(task.amount, task.currency),
        task.currency,
        task.url,
        task.kind,
        task.severity,
        safe_cell(task.fix),
        safe_cell(task.merged_into),
        task.fingerprint,
    ]


def plan_document(plan: FixPlan, kind: str | None = None) -> dict:
    """{"merges": [...], "tasks": [...]}, or only the one list `kind` names."""
    document = plan_json(plan)
    return {kind: document[kind]} if kind else document


def for_owner(plan: FixPlan, owner: str | None) -> FixPlan:
    """The plan with only `owner`'s tasks (None: every task; "" : the unowned ones)."""
    if owner is None:
        return plan
    return FixPlan(merges=plan.merges, tasks=[t for t in plan.tasks if (t.owner or "") == owner])
