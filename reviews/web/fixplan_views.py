"""The run page's fix-plan downloads: the plan as JSON, or one of its CSVs
(reviews/reports/fixplan_export.py writes them)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET

from reviews.engine.fixes.fixplan import FixPlan
from reviews.orchestration.fixes.fixplan import PlanUnavailable, plan_for_run
from reviews.reports.fixplan_export import csv_lines, for_owner, plan_document
from reviews.web.access import get_run_for_user


def csv_response(plan: FixPlan, kind: str, run_id: int) -> HttpResponse:
    return HttpResponse(
        "".join(csv_lines(plan, kind)),
        content_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="run-{run_id}-{kind}.csv"'},
    )


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
