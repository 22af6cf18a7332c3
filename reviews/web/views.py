"""The dashboard: watch a run live, read the verdict, act on it (the upload page is in
reviews.web.uploads).

Views stay thin: parse the request, call one function (reviews.orchestration.intake.submit or a
query helper below), render. The only htmx branch is `if request.htmx: template += "#partial"`."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Count, F, Q, QuerySet, Sum
from django.http import (
    HttpRequest,
    HttpResponse,
    StreamingHttpResponse,
)
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect, HttpResponseStopPolling

from ledger.models import LedgerEntry
from ledger.pricing import analyst_cost_usd, micros_to_usd, run_cost
from reviews.engine.coverage import described
from reviews.models import (
    VERDICT_LABELS,
    AgentRun,
    Batch,
    Dataset,
    Finding,
    ReviewRun,
    Severity,
    Verdict,
)
from reviews.orchestration.fixes.fixplan import links_of
from reviews.orchestration.intake.serve import ServeRefused, rerun
from reviews.orchestration.run.runner import models_allowed
from reviews.reports.exports import findings_csv_response
from reviews.reports.report import stream_report_json
from reviews.search import search_runs
from reviews.web.access import get_batch_for_user, get_run_for_user
from reviews.web.client_address import request_rate_keys
from reviews.web.findings_page import findings_context, shown_findings
from reviews.web.forms import BROKEN_GLASS, BreakGlassForm, RunFilterForm
from workspaces.access import may, scope
from workspaces.models import Role

RUNS_PER_PAGE = 25
LEDGER_CALLS_SHOWN = 200

# --- access helpers ---------------------------------------------------------------
# In reviews.web.access (history_views uses them too): a run, batch or dataset outside
# the user's workspaces is a 404; acting on one needs the reviewer role (403).


def _require_staff(request: HttpRequest) -> None:
    if not request.user.is_staff:
        raise PermissionDenied("break glass is for staff")


# --- upload and batches ----------------------------------------------------------------


def refused(request: HttpRequest, error: ServeRefused) -> HttpResponse:
    """Even failback cannot serve (a client far over its rate limit): 429, and when to
    come back. The upload itself is kept."""
    response = render(
        request, "reviews/refused.html", {"error": error, "batch": error.batch}, status=429
    )
    response["Retry-After"] = str(error.retry_after)
    return response


@login_required
@require_GET
def batch_detail(request: HttpRequest, batch_id: int) -> HttpResponse:
    batch = get_batch_for_user(request, batch_id)
    if request.htmx and batch.status == Batch.Status.RECEIVED:
        return render(request, "reviews/batch.html#waiting", {"batch": batch})
    if request.htmx:  # read by the worker since: its run, or the page with its errors
        run = batch.runs.order_by("-pk").first()
        target = reverse("reviews:run", args=[run.pk]) if run else request.path
        return HttpResponseClientRedirect(target)
    context = {
        "batch": batch,
        "files": batch.files.defer("data"),  # the bytes can be 200 MB; the page needs names
        "errors": split_errors(batch.errors),
        "runs": with_page_totals(list(batch.runs.select_related("batch__dataset", "verdict"))),
        "partial": described(batch.missing_columns, settings.REVIEW_RULES),
    }
    return render(request, "reviews/batch.html", context)


_LOCATION = re.compile(r"^[\w.\[\]-]+$")


def split_errors(errors: list[str]) -> list[tuple[str, str]]:
    """'deals[3].amount: not a number' -> ('deals[3].amount', 'not a number'), so the page
    can set the record and field apart; messages without a location keep it empty."""
    pairs = []
    for error in errors:
        location, _, message = error.partition(": ")
        pairs.append((location, message) if message and _LOCATION.match(location) else ("", error))
    return pairs


# --- one run ------------------------------------------------------------------------


@login_required
@require_GET
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_run_for_user(request, run_id)
    context = run_context(request, run)
    template = "reviews/run.html"
    if request.htmx:
        template += "#live"
        if run.is_finished:
            # 286: htmx swaps in this final partial and stops polling.
            return HttpResponseStopPolling(render_to_string(template, context, request))
    return render(request, template, context)


@dataclass(frozen=True, slots=True)
class AgentRow:
    agent: str
    status: str
    model: str
    seconds: float | None  # so far while running, in all once finished
    calls: int
    tokens: int
    usd: Decimal
    error: str
    refused: list[str]  # what the model asked and the guards refused
    retries: int  # times the sweep sent it again (its worker had stopped)
    thinking: bool = False  # running, and a model may be judging its part right now


def run_context(request: HttpRequest, run: ReviewRun) -> dict:
    verdict = getattr(run, "verdict", None)
    context = {
        "run": run,
        "batch": run.batch,
        "verdict": verdict,
        "verdict_label": VERDICT_LABELS.get(verdict.decision, "") if verdict else "",
        # Under scope `new`, an `approve` means the sync added no problem at all.
        "no_new_problems": bool(
            verdict
            and verdict.decision == Verdict.Decision.APPROVE
            and run.batch.dataset
            and run.batch.dataset.verdict_scope == Dataset.VerdictScope.NEW
        ),
        "agents": (agents := agent_rows(run)),
        "call_count": sum(a.calls for a in agents),
        # Re-run and dismiss: reviewers and admins of the run's workspace.
        "can_act": may(request.user, run.batch.workspace_id, Role.REVIEWER),
        "can_break_glass": bool(
            request.user.is_staff
            and may(request.user, run.batch.workspace_id, Role.REVIEWER)
            and verdict
            and not verdict.is_overridden
            and verdict.decision != Verdict.Decision.APPROVE
        ),
        "break_glass_form": BreakGlassForm(),
        # Columns a rule reads that the export lacks, and the checks they switched off.
        "partial": described(run.batch.missing_columns, settings.REVIEW_RULES),
    }
    if run.is_finished:
        context |= findings_context(run, request.GET)
        context |= ledger_context(run)
        # Which CRM the fix plan's actions are for, decided as on the fix plan page.
        context["links"] = links_of(run)
    return context


def agent_rows(run: ReviewRun) -> list[AgentRow]:
    usage = {
        row["agent"]: row
        for row in LedgerEntry.objects.filter(run=run)
        .order_by()
        .values("agent")
        .annotate(
            calls=Count("id"),
            tokens=Sum(F("input_tokens") + F("output_tokens")),
            micros=Sum("cost_micros"),
        )
    }
    now = timezone.now()
    # Without a gateway (or in a failback run) nobody is "thinking": the detectors run.
    judging = set(run.specialists) | {AgentRun.COORDINATOR} if models_allowed(run) else set()
    rows = []
    for agent in run.agents.all():
        used = usage.get(agent.agent, {})
        end = agent.finished_at or now
        rows.append(
            AgentRow(
                agent=agent.agent,
                status=agent.status,
                model=agent.model,
                seconds=(end - agent.started_at).total_seconds() if agent.started_at else None,
                calls=used.get("calls", 0),
                tokens=used.get("tokens") or 0,
                usd=micros_to_usd(used.get("micros") or 0),
                error=agent.error,
                thinking=agent.status == AgentRun.Status.RUNNING and agent.agent in judging,
                refused=agent.refused,
                retries=agent.retries,
            )
        )
    return rows


def ledger_context(run: ReviewRun) -> dict:
    calls = list(
        LedgerEntry.objects.filter(run=run).order_by("created_at", "id")[:LEDGER_CALLS_SHOWN]
    )
    for call in calls:
        call.usd = micros_to_usd(call.cost_micros)
    cost = run_cost(run.pk)
    records = sum(run.batch.counts.values())
    analyst = analyst_cost_usd(records)
    return {
        "cost": cost,
        "calls": calls,
        "records": records,
        "analyst_usd": analyst,
        "analyst_minutes": Decimal(records) * settings.ANALYST_MINUTES_PER_RECORD,
        "savings_usd": analyst - cost.usd,
    }


# --- actions ------------------------------------------------------------------------


@login_required
@require_POST
def rerun_run(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_run_for_user(request, run_id, Role.REVIEWER)
    try:
        new_run = rerun(run, created_by=request.user, rate_keys=request_rate_keys(request))
    except ServeRefused as error:
        return refused(request, error)
    messages.success(request, f"Fresh re-run of run #{run.pk} started.")
    return redirect("reviews:run", new_run.pk)


@login_required
@require_POST
def break_glass(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_run_for_user(request, run_id, Role.REVIEWER)
    _require_staff(request)
    form = BreakGlassForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Break glass needs a reason; nothing was changed.")
    elif override_verdict(run, request.user, form.cleaned_data["reason"]):
        messages.success(request, "Approved by break glass; the original verdict is kept.")
    else:
        messages.error(request, "This run has no verdict to override, or it already was.")
    return redirect("reviews:run", run.pk)


def override_verdict(run: ReviewRun, user, reason: str) -> bool:
    """Record a break-glass approval beside the verdict; `decision` is never touched.
    A conditional update, so two people breaking glass at once record one override."""
    updated = Verdict.objects.filter(run=run, overridden_at__isnull=True).update(
        overridden_by=user, override_reason=reason, overridden_at=timezone.now()
    )
    return bool(updated)


# --- the run as data ----------------------------------------------------------------


@login_required
@require_GET
def run_json(request: HttpRequest, run_id: int) -> StreamingHttpResponse:
    """The run as JSON (docs/output.md): the same document `manage.py review --format
    json` prints (compact), streamed: a run with 180k findings answers at once."""
    return StreamingHttpResponse(
        stream_report_json(get_run_for_user(request, run_id)), content_type="application/json"
    )


@login_required
@require_GET
def findings_csv(request: HttpRequest, run_id: int) -> StreamingHttpResponse:
    run = get_run_for_user(request, run_id)
    findings, filters = shown_findings(run, request.GET)
    name = f"run-{run.pk}-{filters}-findings.csv" if filters else f"run-{run.pk}-findings.csv"
    return findings_csv_response(findings, name)


# --- the runs list --------------------------------------------------------------------


@login_required
@require_GET
def run_list(request: HttpRequest) -> HttpResponse:
    form = RunFilterForm(request.GET)
    runs = scope(
        ReviewRun.objects.select_related("batch__dataset", "verdict"),
        request.user,
        "batch__workspace",
    )
    runs = filter_runs(runs, form)
    page = Paginator(runs, RUNS_PER_PAGE).get_page(request.GET.get("page"))
    page.object_list = with_page_totals(page.object_list)
    template = "reviews/runs.html" + ("#results" if request.htmx else "")
    return render(request, template, {"form": form, "page": page})


def filter_runs(runs: QuerySet[ReviewRun], form: RunFilterForm) -> QuerySet[ReviewRun]:
    if not form.is_valid():
        return runs
    data = form.cleaned_data
    runs = search_runs(runs, data["q"])
    overridden = Q(verdict__overridden_at__isnull=False)
    if data["verdict"] == BROKEN_GLASS:
        runs = runs.filter(overridden)
    elif data["verdict"] == Verdict.Decision.APPROVE:  # what counts is the effective verdict
        runs = runs.filter(Q(verdict__decision=Verdict.Decision.APPROVE) | overridden)
    elif data["verdict"]:
        runs = runs.filter(verdict__decision=data["verdict"], verdict__overridden_at__isnull=True)
    if data["mode"]:
        runs = runs.filter(mode=data["mode"])
    if data["tier"]:
        runs = runs.filter(tier=data["tier"])
    # Bounds as datetimes rather than created_at__date, so the index on created_at is used.
    if data["date_from"]:
        runs = runs.filter(created_at__gte=_start_of(data["date_from"]))
    if data["date_to"]:
        runs = runs.filter(created_at__lt=_start_of(data["date_to"] + timedelta(days=1)))
    return runs


def _start_of(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


def with_page_totals(runs: Iterable[ReviewRun]) -> list[ReviewRun]:
    """Set `usd` and `severity_counts` on each run of one page: two grouped queries for
    the page, not two per row."""
    runs = list(runs)
    ids = [run.pk for run in runs]
    costs = dict(
        LedgerEntry.objects.filter(run_id__in=ids)
        .order_by()
        .values("run_id")
        .annotate(micros=Sum("cost_micros"))
        .values_list("run_id", "micros")
    )
    # A cached or failback run shows the findings of the run it reuses (findings_of).
    sources = {run.findings_run_id for run in runs}
    tally: dict[int, Counter[str]] = {pk: Counter() for pk in sources}
    for row in (
        Finding.objects.filter(run_id__in=sources)
        .order_by()
        .values("run_id", "severity")
        .annotate(n=Count("id"))
    ):
        tally[row["run_id"]][row["severity"]] = row["n"]
    for run in runs:
        counts = tally[run.findings_run_id]
        run.usd = micros_to_usd(costs.get(run.pk) or 0)
        run.severity_counts = [(s, counts[s]) for s in Severity.values]
        run.findings_total = sum(counts.values())
    return runs
