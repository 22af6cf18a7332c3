"""Pulling a dataset's connected CRM account now (docs/connectors.md)."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router, Status

from connectors import registry
from connectors.models import Connection
from connectors.pulls import AlreadyPulling, request_pull
from connectors.status import pull_summary
from connectors.tasks import send_pull
from reviews.models import Dataset
from reviews.web.api import datasets  # noqa: F401  (registers the dataset_name converter)
from reviews.web.api.auth import UPLOAD
from reviews.web.api.schemas import Problem, PullOut

router = Router(tags=["datasets"])


@router.post(
    "/datasets/{dataset_name:name}/pull",
    auth=UPLOAD,
    response={
        202: PullOut,
        400: Problem,
        401: Problem,
        403: Problem,
        404: Problem,
        409: Problem,
        422: Problem,
    },
    url_name="dataset_pull",
)
def pull_dataset(request: HttpRequest, name: str, full: bool = False):
    """Pull the dataset's HubSpot portal or Salesforce org now (`?full=true`: a full
    pull); a worker pulls, stores and reviews it as the dataset's next sync. 409 while a
    pull of it is queued or running."""
    if "\x00" in name:
        return Status(404, {"detail": "no such dataset"})
    # The token's workspace's dataset of that name (names are unique per workspace).
    dataset = Dataset.objects.filter(workspace_id=request.auth.workspace_id, name=name).first()
    if dataset is None:
        return Status(404, {"detail": f"no dataset named {name[:200]!r}"})
    connection = Connection.objects.select_related("dataset").filter(dataset=dataset).first()
    if connection is None:
        return Status(400, {"detail": f"the dataset has no {registry.labels()} connection"})
    try:
        pull = request_pull(connection, full=full, by="api")
    except AlreadyPulling as error:
        return Status(409, {"detail": str(error)})
    send_pull(pull)
    return Status(202, pull_summary(pull))
