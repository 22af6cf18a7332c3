"""The staff page that applies a run's merges in HubSpot (docs/output.md#applying-
merges): GET shows the dry run (each HubSpot merge, its reason, what is already
recorded); POST sends the ticked merges, once each, and shows what HubSpot answered."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from connectors import registry
from connectors.merges import MergeNotAllowed, apply_merges, configured_client, dry_run
from reviews.orchestration.fixes.fixplan import PlanUnavailable
from reviews.web.access import get_run_for_user
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
                context["error"] = "Tick that merges cannot be undone to apply them."
            elif not chosen:
                context["error"] = "Tick at least one merge."
            elif client is None:
                context["error"] = (
                    f"No {registry.labels()} connection: connect the dataset to its portal "
                    "on its page."
                )
            else:
                # The requests to HubSpot run here, one merge after another: a plan's
                # merges are few; each is claimed before it is sent (never twice).
                context["steps"] = apply_merges(run, chosen, user=request.user, client=client)
                context["applied"] = True
        if "steps" not in context:
            context["steps"] = dry_run(run, user=request.user)
    except (MergeNotAllowed, PlanUnavailable) as error:
        context["error"], context["steps"] = str(error), []
    finally:
        if client is not None:
            client.close()
    status = 400 if context["error"] and request.method == "POST" else 200
    return render(request, "reviews/apply_merges.html", context, status=status)
