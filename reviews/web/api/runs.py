"""Runs: one run as JSON (docs/output.md), the list with filters, a fresh re-run."""

from __future__ import annotations

from typing import Annotated, Literal

from django.http import HttpRequest, HttpResponse
from ninja import Path, Query, Router, Status

from reviews.models import ReviewRun
from reviews.orchestration.intake.serve import ServeRefused, rerun
from reviews.reports.report import run_report
from reviews.web.api.auth import READ, UPLOAD, rate_identity
from reviews.web.api.common import (
    MAX_ID,
    Moment,
    accepted,
    refuse_unstorable,
    run_urls,
    too_many,
    utc,
)
from reviews.web.api.schemas import Problem, RunList, RunReport, UploadAccepted
from reviews.web.forms import RunFilterForm
from reviews.web.views import filter_runs

router = Router(tags=["runs"])

RunId = Annotated[int, Path(ge=1, le=MAX_ID)]
Verdict = Literal["approve", "approve_with_comments", "request_changes", "break_glass"]
MAX_LIMIT = 200


def _run(request: HttpRequest, run_id: int) -> ReviewRun | None:
    """The run, if it is of the token's workspace (a token acts for exactly one)."""
    return (
        ReviewRun.objects.select_related("batch", "verdict", "verdict__overridden_by")
        .filter(pk=run_id, batch__workspace_id=request.auth.workspace_id)
        .first()
    )


@router.get(
    "/runs/{run_id}",
    auth=READ,
    response={200: RunReport, 401: Problem, 403: Problem, 404: Problem, 422: Problem},
    # A key the report leaves out (a dataset sync's history keys) stays out, not null.
    exclude_unset=True,
    url_name="run",
)
def get_run(request: HttpRequest, run_id: RunId):
    """The run as JSON (docs/output.md). Poll it: `run.status` is queued or running until the
    review is done (or failed); then the verdict, findings and ledger are filled."""
    run = _run(request, run_id)
    if run is None:
        return Status(404, {"detail": f"no run {run_id}"})
    return Status(200, {**run_report(run), "urls": run_urls(request, run.pk)})


@router.get(
    "/runs",
    auth=READ,
    response={200: RunList, 401: Problem, 403: Problem, 422: Problem},
    url_name="runs",
)
def list_runs(
    request: HttpRequest,
    dataset: Annotated[str | None, Query(description="Runs of this dataset's batches.")] = None,
    verdict: Annotated[
        Verdict | None, Query(description="The effective verdict, or break_glass.")
    ] = None,
    since: Annotated[
        Moment | None, Query(description="Runs created at or after this time.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 50,
    offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
):
    """Runs, newest first."""
    runs = filter_runs(
        ReviewRun.objects.select_related("verdict", "batch__dataset").filter(
            batch__workspace_id=request.auth.workspace_id
        ),
        RunFilterForm({"verdict": verdict or ""}),
    )
    # Names are kept stripped (a batch's "dataset"): " acme " is acme, and a blank one,
    # as an empty field of a form, filters nothing out.
    name = (refuse_unstorable(dataset, "dataset") or "").strip()
    if name:
        runs = runs.filter(batch__dataset__name=name)
    since = utc(since)
    if since is not None:
        runs = runs.filter(created_at__gte=since)
    page = runs.order_by("-created_at", "-id")[offset : offset + limit]
    return Status(200, {"count": runs.count(), "items": [_item(request, run) for run in page]})


def _item(request: HttpRequest, run: ReviewRun) -> dict:
    verdict = getattr(run, "verdict", None)
    return {
        "id": run.pk,
        "batch_id": run.batch_id,
        "dataset": run.batch.dataset.name if run.batch.dataset else None,
        "status": run.status,
        "mode": run.mode,
        "tier": run.tier,
        "degraded": run.degraded,
        "partial": run.batch.is_partial,
        "verdict": verdict.effective_decision if verdict else None,
        "standing": run.standing or None,
        "created_at": run.created_at,
        "finished_at": run.finished_at,
        "urls": run_urls(request, run.pk),
    }


@router.post(
    "/runs/{run_id}/rerun",
    auth=UPLOAD,
    response={
        202: UploadAccepted,
        401: Problem,
        403: Problem,
        404: Problem,
        422: Problem,
        429: Problem,
    },
    url_name="rerun",
)
def rerun_run(request: HttpRequest, response: HttpResponse, run_id: RunId):
    """A fresh review of the run's batch (skips the cache; counts against the rate limit
    and the budget, like the dashboard's re-run button)."""
    run = _run(request, run_id)
    if run is None:
        return Status(404, {"detail": f"no run {run_id}"})
    token = request.auth
    try:
        new_run = rerun(run, created_by=token.user, rate_keys=rate_identity(token, request))
    except ServeRefused as error:
        return Status(429, too_many(response, error))
    return Status(202, accepted(request, response, new_run))
