"""The staff pages that apply a run's merges in HubSpot (docs/output.md#applying-
merges): GET shows the dry run (each HubSpot merge, its reason, what is already
recorded); POST sends the ticked merges, once each, and shows what HubSpot answered.
And a dataset's applied merges, each with Undo (docs/output.md#undoing-a-merge)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from connectors import registry
from connectors.merge_steps import dry_run
from connectors.merges import apply_merges
from connectors.undo import applied, planned, undo_merges
from connectors.write_access import MergeNotAllowed, configured_client
from reviews.models import ReviewRun
from reviews.orchestration.fixes.fixplan import PlanUnavailable
from reviews.web.access import get_dataset_for_user, get_run_for_user, require_role
from workspaces.models import Role


@login_required
@require_http_methods(["GET", "POST"])
def apply_run_merges(request: HttpRequest, run_id: int) -> HttpResponse:
    if not request.user.is_staff:
        raise PermissionDenied("merges are applied by staff")
    # A member's run only (else 404); merging in HubSpot changes the CRM: reviewer role.
    run = get_run_for_user(request, run_id, Role.REVIEWER)
    context = {"run": run, "connected": False, "applied": False, "error": ""}
    client = None
    try:
        client = configured_client(run.batch.dataset)
        context["connected"] = client is not None
        if request.method == "POST":
            chosen = request.POST.getlist("fingerprint")
            if not request.POST.get("confirm"):
                context["error"] = "Tick that you read what each merge loses to apply them."
            elif not chosen:
                context["error"] = "Tick at least one merge."
            elif client is None:
                context["error"] = registry.not_connected()
            else:
                # The requests to HubSpot run here, one merge after another: a plan's
                # merges are few; each is claimed before it is sent (never twice).
                context["steps"] = apply_merges(run, chosen, user=request.user, client=client)
                context["applied"] = True
        if "steps" not in context:
            # The pre-flight reads both records of each merge from HubSpot when connected.
            context["steps"] = dry_run(run, user=request.user, client=client)
    except (MergeNotAllowed, PlanUnavailable) as error:
        context["error"], context["steps"] = str(error), []
    finally:
        if client is not None:
            client.close()
    status = 400 if context["error"] and request.method == "POST" else 200
    return render(request, "reviews/apply_merges.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def applied_merges(request: HttpRequest, name: str) -> HttpResponse:
    """The dataset's applied merges, newest first, each with what its undo would give
    back and what it cannot (the dry run, from the snapshot: nothing sent); POST undoes
    one merge (a run and a fingerprint) once a person ticks that they read it."""
    if not request.user.is_staff:
        raise PermissionDenied("merges are undone by staff")
    dataset = get_dataset_for_user(request, name)
    require_role(request, dataset.workspace_id, Role.REVIEWER)
    context = {"dataset": dataset, "error": "", "done": []}
    status = 200
    if request.method == "POST":
        run = ReviewRun.objects.filter(
            pk=_int(request.POST.get("run")), batch__dataset=dataset
        ).first()
        fingerprint = request.POST.get("fingerprint", "")
        client = None
        try:
            if run is None:
                raise MergeNotAllowed("no such run of this dataset")
            if not request.POST.get("confirm"):
                raise MergeNotAllowed("Tick that you read what undo cannot bring back.")
            client = configured_client(dataset)
            if client is None:
                raise MergeNotAllowed("No HubSpot connection: connect the dataset first.")
            # The requests run here: one create and its associations per record.
            context["done"] = undo_merges(run, [fingerprint], user=request.user, client=client)
        except MergeNotAllowed as error:
            context["error"], status = str(error), 400
        finally:
            if client is not None:
                client.close()
    rows = applied(dataset).select_related("run", "requested_by", "undone_by")
    context["rows"] = [(row, planned(row)) for row in rows[:200]]
    return render(request, "reviews/applied_merges.html", context, status=status)


def _int(value: str | None) -> int:
    return int(value) if value and value.isdigit() else 0
