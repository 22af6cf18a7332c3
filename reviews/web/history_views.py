"""Dataset history on the dashboard: the dataset page, and Dismiss / Undo on a finding
of the run page (htmx: the finding is swapped in place, no page reload)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from connectors import registry
from connectors.status import connection_status
from reviews.engine.vocabulary import crm_of
from reviews.models import Dismissal, Finding, ReviewRun
from reviews.orchestration.dataset.dismissals import DismissalError, active, dismiss, undo_dismissal
from reviews.web import completeness, datasets
from reviews.web.access import get_dataset_for_user, get_finding_for_user
from reviews.web.forms import DismissForm


def mark_dismissed(findings: list[Finding], run: ReviewRun) -> list[Finding]:
    """Set `dismissal` (the standing one, or None) on each finding of one page: one query."""
    dataset_id = run.batch.dataset_id
    standing: dict[str, Dismissal] = {}
    if dataset_id is not None:
        keys = [f.fingerprint for f in findings]
        standing = {
            d.fingerprint: d
            for d in Dismissal.objects.filter(
                dataset_id=dataset_id, fingerprint__in=keys, undone_at__isnull=True
            ).select_related("created_by")
        }
    for finding in findings:
        finding.dismissal = standing.get(finding.fingerprint)
    return findings


def _finding_response(request: HttpRequest, finding: Finding, error: str = "") -> HttpResponse:
    if not request.htmx:  # without JavaScript: back to the run page, with the outcome
        if error:
            messages.error(request, error)
        return redirect("reviews:run", finding.run_id)
    finding.dismissal = active(finding.run.batch.dataset, finding.fingerprint)
    context = {
        "f": finding,
        "run": finding.run,
        "crm": crm_of(finding.run.batch.source),
        "in_dataset": True,
        "can_act": True,  # only a reviewer got here
        "dismiss_form": DismissForm(),
        "dismiss_error": error,
        "open": True,
    }
    return render(request, "reviews/_finding.html", context)


@login_required
@require_POST
def dismiss_finding(request: HttpRequest, run_id: int, finding_id: int) -> HttpResponse:
    finding = get_finding_for_user(request, run_id, finding_id)
    form = DismissForm(request.POST)
    if not form.is_valid():
        error = form.errors.as_data()["reason"][0]
        if error.code == "required":
            return _finding_response(request, finding, "A reason is required to dismiss it.")
        return _finding_response(request, finding, " ".join(error.messages))
    try:
        dismiss(
            finding.run.batch.dataset,
            finding.fingerprint,
            reason=form.cleaned_data["reason"],
            user=request.user,
            finding=finding,
            via=Dismissal.Via.DASHBOARD,
        )
    except DismissalError as error:
        return _finding_response(request, finding, str(error))
    return _finding_response(request, finding)


@login_required
@require_POST
def undo_finding_dismissal(request: HttpRequest, run_id: int, finding_id: int) -> HttpResponse:
    finding = get_finding_for_user(request, run_id, finding_id)
    try:
        undo_dismissal(finding.run.batch.dataset, finding.fingerprint, user=request.user)
    except DismissalError as error:
        return _finding_response(request, finding, str(error))
    return _finding_response(request, finding)


@login_required
@require_GET
def dataset_detail(request: HttpRequest, name: str) -> HttpResponse:
    dataset = get_dataset_for_user(request, name)
    history = datasets.syncs(dataset)
    context = {
        "dataset": dataset,
        "syncs": history,
        "chart": datasets.trend(history),
        "by_owner": datasets.breakdown(history, "by_owner"),
        "by_source": datasets.breakdown(history, "by_source"),
        "by_stage": datasets.breakdown(history, "by_stage"),
        "fill_rates": completeness.fill_rates(history),
        "drop_points": completeness.DROP_POINTS,
        "shares": datasets.kind_shares(dataset),
        "dismissals": dataset.dismissals.filter(undone_at__isnull=True).select_related(
            "created_by"
        )[:50],
        "connection": connection_status(dataset),
        "crm_providers": registry.provider_choices(),  # the connect form's choice
        "crm_labels": registry.labels(),
        "crm_keys": list(registry.CONNECTORS),  # Salesforce's form asks for more fields
    }
    return render(request, "reviews/dataset.html", context)
