"""GET /api/v1/runs/{id}/fix-plan: a finished run's merge plan and owners' to-do list
(docs/output.md), as JSON or (format=csv, with kind) the CSV the run page offers."""

from __future__ import annotations

from typing import Annotated, Literal

from django.http import HttpRequest
from ninja import Path, Query, Router, Status
from pydantic import TypeAdapter

from reviews.models import ReviewRun
from reviews.orchestration.fixes.fixplan import PlanUnavailable, plan_for_run
from reviews.reports.fixplan_export import for_owner, plan_document
from reviews.web.api.auth import READ
from reviews.web.api.common import MAX_ID, refuse_unstorable
from reviews.web.api.schemas import FixPlanOut, Problem
from reviews.web.fixplan_views import csv_response

router = Router(tags=["fix plan"])

RunId = Annotated[int, Path(ge=1, le=MAX_ID)]
Kind = Literal["merges", "tasks"]
Format = Literal["json", "csv"]
OWNER_MAX = 200

# The three query parameters, documented as one exploded object (the same query string:
# `?format=csv&kind=merges&owner=...`): OpenAPI parameters cannot depend on one another,
# but an object's schema can say that a CSV, one list, needs `kind`. ninja still reads
# them one by one (their own entries are left out of the document).
PLAN_QUERY = {
    "in": "query",
    "name": "plan",
    "style": "form",
    "explode": True,
    "required": False,
    "description": "`kind`, `format` and `owner`; `format=csv` needs `kind`.",
    "schema": {
        "type": "object",
        "properties": {
            "kind": {
                **TypeAdapter(Kind).json_schema(),
                "description": "Only the merge plan or only the to-do list (needed for CSV).",
            },
            "format": {
                **TypeAdapter(Format).json_schema(),
                "default": "json",
                "description": "csv: one row per merge or task, HubSpot's `Record ID` first.",
            },
            "owner": {
                "type": "string",
                "maxLength": OWNER_MAX,
                "pattern": "^[^\\x00]*$",
                "description": "Only this owner's tasks (empty: the tasks with no owner).",
            },
        },
        "anyOf": [
            {"not": {"required": ["format"]}},
            {"properties": {"format": {"const": "json"}}},
            {"required": ["kind"]},
        ],
    },
}


@router.get(
    "/runs/{run_id}/fix-plan",
    auth=READ,
    response={
        200: FixPlanOut,
        401: Problem,
        403: Problem,
        404: Problem,
        409: Problem,
        422: Problem,
    },
    url_name="fix_plan",
    # format=csv answers text/csv: declared beside the JSON so clients (and the schema
    # checks) expect it.
    openapi_extra={
        "responses": {200: {"content": {"text/csv": {"schema": {"type": "string"}}}}},
        "parameters": [PLAN_QUERY],
    },
)
def get_fix_plan(
    request: HttpRequest,
    run_id: RunId,
    kind: Annotated[Kind | None, Query(include_in_schema=False)] = None,
    format: Annotated[Format, Query(include_in_schema=False)] = "json",  # noqa: A002
    owner: Annotated[str | None, Query(include_in_schema=False, max_length=OWNER_MAX)] = None,
):
    """The run's merge plan (every duplicate finding: the survivor, the records merged
    into it, the reason, what moves and what is lost) and to-do list (every other
    finding as a task on one record: owner, HubSpot property, problem, money at risk,
    link), leaving out what the dataset's team dismissed. 409 until the run is done."""
    run = (
        ReviewRun.objects.select_related("batch__dataset")
        .filter(pk=run_id, batch__workspace_id=request.auth.workspace_id)
        .first()
    )
    if run is None:
        return Status(404, {"detail": f"no run {run_id}"})
    if format == "csv" and kind is None:
        return Status(422, {"detail": "format=csv needs kind=merges or kind=tasks"})
    try:
        plan = for_owner(plan_for_run(run), refuse_unstorable(owner, "owner"))
    except PlanUnavailable as error:
        return Status(409, {"detail": str(error)})
    if format == "csv":
        return csv_response(plan, kind, run.pk)
    return Status(200, {"merges": [], "tasks": [], **plan_document(plan, kind)})
