"""Undoing a run's applied merges over the API (docs/output.md#undoing-a-merge): the same
connectors.undo functions as the dataset page and `manage.py undo_merges`. GET is the
dry run; POST makes the merged records again in HubSpot, each at most once. Staff only
(the token's user), with the upload scope to write."""

from __future__ import annotations

from typing import Annotated

from django.http import HttpRequest
from ninja import Field, Router, Schema, Status

from connectors.undo import undo_dry_run, undo_merges
from connectors.write_access import MergeNotAllowed, configured_client
from reviews.models import ReviewRun
from reviews.web.api.auth import READ, UPLOAD
from reviews.web.api.fixplan import RunId
from reviews.web.api.schemas import Problem

router = Router(tags=["fix plan"])
Fingerprint = Annotated[str, Field(min_length=1, max_length=64)]


class UndoIn(Schema):
    # The merges to undo, by their duplicate finding's fingerprint; null: every applied
    # merge of the run (an undo HubSpot refused before is asked again only by name).
    fingerprints: list[Fingerprint] | None = Field(None, max_length=1000)


class UndoStepOut(Schema):
    object_type: str
    merged_id: str  # the record merged away (its old id)
    survivor_id: str
    fingerprint: str
    outcome: str  # would undo, undone, failed, unknown, undoing, cannot undo
    restored_id: str  # the record made again: its new id ("" until undone)
    detail: str
    restores: str  # what the snapshot gives back
    cannot: str  # what undo cannot bring back


class UndoOut(Schema):
    applied: bool  # false: a dry run, nothing sent
    steps: list[UndoStepOut]


def _run(request: HttpRequest, run_id: int) -> ReviewRun | None:
    return (
        ReviewRun.objects.select_related("batch__dataset")
        .filter(pk=run_id, batch__workspace_id=request.auth.workspace_id)
        .first()
    )


def _refused(request: HttpRequest, run_id: int) -> Status | ReviewRun:
    run = _run(request, run_id)
    if run is None:
        return Status(404, {"detail": f"no run {run_id}"})
    if not request.auth.user.is_staff:
        return Status(403, {"detail": "merges are undone by a staff member"})
    return run


RESPONSES = {200: UndoOut, 400: Problem, 401: Problem, 403: Problem, 404: Problem, 422: Problem}


@router.get("/runs/{run_id}/merges/undo", auth=READ, response=RESPONSES, url_name="undo_dry_run")
def dry_run(request: HttpRequest, run_id: RunId):
    """What undoing the run's applied merges would do, merge by merge: what each
    snapshot gives back and what it cannot. Sends nothing."""
    run = _refused(request, run_id)
    if isinstance(run, Status):
        return run
    try:
        steps = undo_dry_run(run, user=request.auth.user)
    except MergeNotAllowed as error:
        return Status(400, {"detail": str(error)})
    return Status(200, {"applied": False, "steps": steps})


@router.post("/runs/{run_id}/merges/undo", auth=UPLOAD, response=RESPONSES, url_name="undo")
def undo(request: HttpRequest, run_id: RunId, payload: UndoIn):
    """Make the merged-away records of the run's applied merges (those named, or all)
    again in HubSpot from their snapshots, each at most once; what HubSpot answered."""
    run = _refused(request, run_id)
    if isinstance(run, Status):
        return run
    client = None
    try:
        client = configured_client(run.batch.dataset)
        if client is None:
            return Status(400, {"detail": "the run's dataset has no HubSpot connection"})
        steps = undo_merges(run, payload.fingerprints, user=request.auth.user, client=client)
    except MergeNotAllowed as error:
        return Status(400, {"detail": str(error)})
    finally:
        if client is not None:
            client.close()
    return Status(200, {"applied": True, "steps": steps})
