"""The fix plan as files a person uses at once (docs/output.md): CSV with HubSpot's
`Record ID` column first (one record id per row, as HubSpot exports and imports it) and
HubSpot's internal property names, and JSON. The run page, the API and the CLI share
these writers; cells are made spreadsheet-safe as the findings CSV's are."""

from __future__ import annotations

import csv
from collections.abc import Iterator

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET

from reviews.engine.fixplan import FixPlan, Merge, plan_json
from reviews.engine.fixtasks import Task
from reviews.orchestration.fixplan import PlanUnavailable, plan_for_run
from reviews.web.access import get_run_for_user
from reviews.web.exports import safe_cell

KINDS = ("merges", "tasks")
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
    records merged into it in `merge`, joined by ";" as HubSpot joins ids) or per task."""
    writer = csv.writer(_Echo())
    if kind == "merges":
        yield writer.writerow(MERGE_COLUMNS)
        for merge in plan.merges:
            yield writer.writerow(_merge_row(merge))
    else:
        yield writer.writerow(TASK_COLUMNS)
        for task in plan.tasks:
            yield writer.writerow(_task_row(task))


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
        "" if merge.amount is None else merge.amount,
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
        "" if task.amount is None else task.amount,
        task.currency,
        task.url,
        task.kind,
        task.severity,
        safe_cell(task.fix),
        safe_cell(task.merged_into),
        task.fingerprint,
    ]


def csv_response(plan: FixPlan, kind: str, run_id: int) -> HttpResponse:
    return HttpResponse(
        "".join(csv_lines(plan, kind)),
        content_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="run-{run_id}-{kind}.csv"'},
    )


def plan_document(plan: FixPlan, kind: str | None = None) -> dict:
    """{"merges": [...], "tasks": [...]}, or only the one list `kind` names."""
    document = plan_json(plan)
    return {kind: document[kind]} if kind else document


def for_owner(plan: FixPlan, owner: str | None) -> FixPlan:
    """The plan with only `owner`'s tasks (None: every task; "" : the unowned ones)."""
    if owner is None:
        return plan
    return FixPlan(merges=plan.merges, tasks=[t for t in plan.tasks if (t.owner or "") == owner])


# --- the run page's downloads -------------------------------------------------------------


@login_required
@require_GET
def fix_plan_json(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_run_for_user(request, run_id)
    try:
        plan = for_owner(plan_for_run(run), request.GET.get("owner"))
    except PlanUnavailable as error:
        return JsonResponse({"detail": str(error)}, status=409)
    response = JsonResponse(plan_document(plan), json_dumps_params={"ensure_ascii": False})
    response["Content-Disposition"] = f'inline; filename="run-{run.pk}-fix-plan.json"'
    return response


@login_required
@require_GET
def fix_plan_csv(request: HttpRequest, run_id: int, kind: str) -> HttpResponse:
    run = get_run_for_user(request, run_id)
    try:
        plan = for_owner(plan_for_run(run), request.GET.get("owner"))
    except PlanUnavailable as error:
        return HttpResponse(str(error), status=409, content_type="text/plain; charset=utf-8")
    return csv_response(plan, kind, run.pk)
