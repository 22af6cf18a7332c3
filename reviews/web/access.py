"""Access helpers for the dashboard's views (healthchecks' `_get_check_for_user`): a
run, batch, finding or dataset outside the user's workspaces is a 404, as if it did not
exist; acting on one of their own (re-run, dismiss) needs the reviewer role there, else
403. The workspaces themselves come from workspaces.access, the one place that says
which are the user's."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest
from django.shortcuts import get_object_or_404

from reviews.models import Batch, Dataset, Finding, ReviewRun, findings_of
from workspaces.access import may, scope
from workspaces.models import Role


def require_role(request: HttpRequest, workspace_id: int, role: str) -> None:
    if role != Role.VIEWER and not may(request.user, workspace_id, role):
        raise PermissionDenied(f"this needs the {role} role in the workspace")


def get_run_for_user(request: HttpRequest, run_id: int, role: str = Role.VIEWER) -> ReviewRun:
    runs = ReviewRun.objects.select_related(
        "batch", "batch__dataset", "created_by", "verdict", "verdict__overridden_by"
    )
    run = get_object_or_404(scope(runs, request.user, "batch__workspace"), pk=run_id)
    require_role(request, run.batch.workspace_id, role)
    return run


def get_batch_for_user(request: HttpRequest, batch_id: int) -> Batch:
    batches = scope(Batch.objects.select_related("created_by"), request.user, "workspace")
    return get_object_or_404(batches, pk=batch_id)


def get_finding_for_user(
    request: HttpRequest, run_id: int, finding_id: int, role: str = Role.REVIEWER
) -> Finding:
    """A finding the run shows: its own, or the reused run's for a cached run (then seen
    as this run's: its dataset is the one a dismissal belongs to)."""
    run = get_run_for_user(request, run_id, role)
    finding = get_object_or_404(findings_of(run), pk=finding_id)
    finding.run = run
    if run.batch.dataset is None:  # no dataset to remember a dismissal in
        raise Http404("this run's batch belongs to no dataset")
    return finding


def get_dataset_for_user(request: HttpRequest, name: str) -> Dataset:
    """The dataset of this name in the user's workspaces. Names are unique per workspace:
    a user in two workspaces with the same name picks one with ?workspace=<id> (without
    it, the first by workspace name)."""
    datasets = scope(Dataset.objects.select_related("workspace"), request.user, "workspace")
    datasets = datasets.filter(name=name).order_by("workspace__name")
    workspace = request.GET.get("workspace", "")
    if workspace.isdigit():
        datasets = datasets.filter(workspace_id=int(workspace))
    dataset = datasets.first()
    if dataset is None:
        raise Http404("no such dataset in your workspaces")
    return dataset


def get_dataset_to_change(request: HttpRequest, name: str) -> Dataset:
    """The user's dataset of that name, if they hold the reviewer role in its workspace:
    changing its policy or its rules is the reviewer's, as dismissing is (403 otherwise)."""
    dataset = get_dataset_for_user(request, name)
    require_role(request, dataset.workspace_id, Role.REVIEWER)
    return dataset
