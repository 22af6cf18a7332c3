"""A dataset's deal pipelines on the dashboard: upload HubSpot's pipelines API response
on the dataset page (reviews.orchestration.dataset.pipelines does the rest)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from reviews.engine.ingest import IngestError
from reviews.orchestration.dataset.pipelines import store_pipelines_response
from reviews.web.access import get_dataset_for_user, require_role
from workspaces.models import Role

MAX_PIPELINES_BYTES = 5 * 1024 * 1024  # a portal's pipelines answer is kilobytes


@login_required
@require_POST
def upload_pipelines(request: HttpRequest, name: str) -> HttpResponse:
    dataset = get_dataset_for_user(request, name)
    require_role(request, dataset.workspace_id, Role.REVIEWER)  # as dismissing a finding
    upload = request.FILES.get("pipelines")
    if upload is None:
        messages.error(
            request, "Choose the pipelines file (the JSON of GET /crm/v3/pipelines/deals)."
        )
    elif upload.size > MAX_PIPELINES_BYTES:
        messages.error(
            request, f"{upload.name}: {upload.size:,} bytes; a pipelines file is under 5 MB."
        )
    else:
        try:
            store_pipelines_response(
                dataset.name,
                upload.read(),
                how="upload",
                workspace_id=dataset.workspace_id,
                file_name=upload.name,
            )
        except IngestError as error:
            messages.error(request, "; ".join(error.errors[:5]))
        else:
            messages.success(request, "Pipelines saved: later syncs of this dataset use them.")
    page = reverse("reviews:dataset", args=[dataset.name])
    return redirect(f"{page}?workspace={dataset.workspace_id}#pipelines")
