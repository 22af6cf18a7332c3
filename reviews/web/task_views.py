"""The staff page that sends a run's to-do list to the owners as HubSpot tasks
(docs/output.md#tasks-for-the-owners): GET shows the dry run (each task, its owner and
record, what is already sent or resolved); POST, confirmed, sends them (or one owner's),
once each per finding, and shows what HubSpot answered."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from connectors import registry
from connectors.owner_tasks import dry_run, send_tasks
from connectors.write_access import MergeNotAllowed, configured_client
from reviews.orchestration.fixes.fixplan import PlanUnavailable
from reviews.web.access import get_run_for_user
from workspaces.models import Role


@login_required
@require_http_methods(["GET", "POST"])
def send_run_tasks(request: HttpRequest, run_id: int) -> HttpResponse:
    if not request.user.is_staff:
        raise PermissionDenied("tasks are sent by staff")
    # A member's run only (else 404); writing to HubSpot is the reviewer's, as merging is.
    run = get_run_for_user(request, run_id, Role.REVIEWER)
    owner = request.POST.get("owner") if request.method == "POST" else request.GET.get("owner")
    context = {"run": run, "owner": owner, "connected": False, "sent": False, "error": ""}
    client = None
    try:
        client = configured_client(run.batch.dataset)
        context["connected"] = client is not None
        if request.method == "POST":
            if not request.POST.get("confirm"):
                context["error"] = "Tick that the tasks go to the owners in HubSpot to send them."
            elif client is None:
                context["error"] = registry.not_connected()
            else:
                context["steps"] = send_tasks(run, owner, user=request.user, client=client)
                context["sent"] = True
        if "steps" not in context:
            context["steps"] = dry_run(run, owner, user=request.user)
    except (MergeNotAllowed, PlanUnavailable) as error:
        context["error"], context["steps"] = str(error), []
    finally:
        if client is not None:
            client.close()
    status = 400 if context["error"] and request.method == "POST" else 200
    return render(request, "reviews/send_tasks.html", context, status=status)
