"""The run's fix plan: as a page (reviews/web/fixplan_page.py says what it shows), and
its downloads, the plan as JSON or one of its CSVs (reviews/reports/fixplan_export.py
writes them)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from reviews.engine.fixes.fixplan import FixPlan
from reviews.orchestration.dataset.policies import kinds_of_run
from reviews.orchestration.fixes.fixplan import PlanUnavailable, links_of, plan_for_run
from reviews.reports.fixplan_export import csv_lines, for_owner, plan_document
from reviews.web.access import get_run_for_user
from reviews.web.fixplan_page import page_context


def csv_response(plan: FixPlan, kind: str, run_id: int) -> HttpResponse:
    return HttpResponse(
        "".join(csv_lines(plan, kind)),
        content_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="run-{run_id}-{kind}.csv"'},
    )


@login_required
@require_GET
def fix_plan_page(request: HttpRequest, run_id: int) -> HttpResponse:
    """`?owner=NAME`: that owner's tasks only (`?owner=`: the unowned ones), as the
    downloads take it; an htmx request gets the tasks' section alone."""
    run = get_run_for_user(request, run_id)
    context: dict = {"run": run, "dataset": run.batch.dataset}
    try:
        plan = plan_for_run(run)
    except PlanUnavailable as error:
        context["error"] = str(error)
        return render(request, "reviews/fix_plan.html", context, status=409)
    owner = request.GET.get("owner")
    context.update(
        page_context(plan, links_of(run), owner, request.GET.get("page"), kinds_of_run(run))
    )
    template = "reviews/fix_plan.html"
    if request.htmx:
        template += "#tasks"
    return render(request, template, context)


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
