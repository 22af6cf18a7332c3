"""Datasets: the history of one CRM's syncs, and dismissing a problem for it (the
same reviews.orchestration.dataset.dismissals functions as the dashboard and the CLI)."""

from __future__ import annotations

from django.db.models import Count
from django.http import HttpRequest
from django.urls import register_converter
from ninja import Router, Status

from connectors.status import connection_status
from reviews.engine.ingest import IngestError
from reviews.models import Dataset, Dismissal, Finding, ReviewRun
from reviews.orchestration.dataset.dismissals import DismissalError, dismiss, undo_dismissal
from reviews.orchestration.dataset.pipelines import store_pipelines_response
from reviews.web.api.auth import READ, UPLOAD
from reviews.web.api.bodies import PIPELINES_BODY
from reviews.web.api.common import run_urls
from reviews.web.api.schemas import (
    DatasetOut,
    DismissalIn,
    DismissalOut,
    PipelinesOut,
    Problem,
)


class AnyName:
    """A dataset name in a path, whatever it holds: `/` (sent as is or as %2F) and line
    breaks too (Django's `path` converter stops at a newline)."""

    regex = r"[\s\S]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(AnyName, "dataset_name")

router = Router(tags=["datasets"])

RUNS_SHOWN = 50


def _dataset(request: HttpRequest, name: str) -> Dataset | None:
    """The token's workspace's dataset of that name (names are unique per workspace)."""
    if "\x00" in name:  # no stored name has one (and Postgres cannot compare it)
        return None
    return (
        Dataset.objects.annotate(batch_count=Count("batches"))
        .filter(workspace_id=request.auth.workspace_id, name=name)
        .first()
    )


def _not_found(name: str) -> Status:
    return Status(404, {"detail": f"no dataset named {name[:200]!r}"})


def _run(request: HttpRequest, run: ReviewRun, counts: dict[tuple[int, str], int]) -> dict:
    verdict = getattr(run, "verdict", None)
    return {
        "id": run.pk,
        "batch_id": run.batch_id,
        "as_of": run.as_of,
        "status": run.status,
        "mode": run.mode,
        "verdict": verdict.effective_decision if verdict else None,
        "new": counts.get((run.pk, Finding.Status.NEW), 0),
        "open": counts.get((run.pk, Finding.Status.OPEN), 0),
        "resolved": len(run.resolved),
        "suppressed": len(run.suppressed),
        "standing": run.standing or None,
        "urls": run_urls(request, run.pk),
    }


def _dismissal(dismissal: Dismissal) -> dict:
    return {
        "fingerprint": dismissal.fingerprint,
        "category": dismissal.category,
        "kind": dismissal.kind,
        "title": dismissal.title,
        "reason": dismissal.reason,
        "dismissed_by": dismissal.created_by.get_username() if dismissal.created_by else None,
        "dismissed_at": dismissal.created_at,
        "via": dismissal.via,
        "undone_by": dismissal.undone_by.get_username() if dismissal.undone_by else None,
        "undone_at": dismissal.undone_at,
    }


@router.post(
    "/datasets/{dataset_name:name}/dismissals",
    auth=UPLOAD,
    response={
        201: DismissalOut,
        400: Problem,
        401: Problem,
        403: Problem,
        404: Problem,
        422: Problem,
    },
    url_name="dismissals",
)
def dismiss_finding(request: HttpRequest, name: str, payload: DismissalIn):
    """Dismiss a problem (by its fingerprint) for this dataset, with a reason: later
    reviews list it under `suppressed` and leave it out of the verdict."""
    dataset = _dataset(request, name)
    if dataset is None:
        return _not_found(name)
    try:
        made = dismiss(
            dataset,
            _text(payload.fingerprint),
            reason=_text(payload.reason),
            user=request.auth.user,
            via=Dismissal.Via.API,
        )
    except DismissalError as error:
        return Status(400, {"detail": str(error)})
    return Status(201, _dismissal(made))


@router.delete(
    "/datasets/{dataset_name:name}/dismissals/{fingerprint}",
    auth=UPLOAD,
    response={200: DismissalOut, 400: Problem, 401: Problem, 403: Problem, 404: Problem},
    url_name="dismissal",
)
def undo_dismissal_of(request: HttpRequest, name: str, fingerprint: str):
    """Take a dismissal back: later reviews flag the problem again."""
    dataset = _dataset(request, name)
    if dataset is None:
        return _not_found(name)
    try:
        undone = undo_dismissal(dataset, _text(fingerprint), user=request.auth.user)
    except DismissalError as error:
        return Status(400, {"detail": str(error)})
    return Status(200, _dismissal(undone))


MAX_PIPELINES_BYTES = 5 * 1024 * 1024


@router.get(
    "/datasets/{dataset_name:name}/pipelines",
    auth=READ,
    response={200: PipelinesOut, 401: Problem, 403: Problem, 404: Problem},
    url_name="dataset_pipelines",
)
def get_pipelines(request: HttpRequest, name: str):
    """The deal pipelines the dataset remembers (every later sync reads stages by them)."""
    dataset = _dataset(request, name)
    if dataset is None:
        return _not_found(name)
    return Status(200, _pipelines(dataset))


@router.put(
    "/datasets/{dataset_name:name}/pipelines",
    auth=UPLOAD,
    response={
        200: PipelinesOut,
        400: Problem,
        401: Problem,
        403: Problem,
        404: Problem,
        413: Problem,
    },
    url_name="dataset_pipelines_put",
    openapi_extra={"requestBody": PIPELINES_BODY},
)
def put_pipelines(request: HttpRequest, name: str):
    """Store HubSpot's deal pipelines on the token's workspace's dataset: the body is
    the `GET /crm/v3/pipelines/deals` response as HubSpot sent it. Each pipeline
    replaces the one of its id; the others are kept."""
    dataset = _dataset(request, name)
    if dataset is None:
        return _not_found(name)
    if len(request.body) > MAX_PIPELINES_BYTES:
        return Status(413, {"detail": "a pipelines response is under 5 MB"})
    try:
        dataset = store_pipelines_response(
            dataset.name, request.body, how="api", workspace_id=dataset.workspace_id
        )
    except IngestError as error:
        return Status(400, {"detail": "; ".join(error.errors[:5])})
    return Status(200, _pipelines(dataset))


def _pipelines(dataset: Dataset) -> dict:
    return {
        "name": dataset.name,
        "pipelines": dataset.pipelines or [],
        "updated_at": dataset.pipelines_updated_at,
        "updated_by": dataset.pipelines_from,
    }


def _text(value: str) -> str:
    """NUL bytes and lone surrogates cannot be stored: dropped and replaced, so the
    dismissal functions judge (and refuse, for a fingerprint) what is left."""
    return value.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")


# Last: a name may hold "/", so this pattern would also match the dismissal routes' paths.
@router.get(
    "/datasets/{dataset_name:name}",
    auth=READ,
    response={200: DatasetOut, 401: Problem, 403: Problem, 404: Problem},
    url_name="dataset",
)
def get_dataset(request: HttpRequest, name: str):
    """The dataset's latest syncs (new / open / resolved / suppressed counts) and the
    problems the team dismissed."""
    dataset = _dataset(request, name)
    if dataset is None:
        return _not_found(name)
    runs = list(
        ReviewRun.objects.filter(batch__dataset=dataset)
        .select_related("verdict")
        .order_by("-as_of", "-id")[:RUNS_SHOWN]
    )
    counts = {
        (row["run_id"], row["status"]): row["n"]
        for row in Finding.objects.filter(run_id__in=[run.pk for run in runs])
        .order_by()
        .values("run_id", "status")
        .annotate(n=Count("id"))
    }
    standing = (
        Dismissal.objects.filter(dataset=dataset, undone_at__isnull=True)
        .select_related("created_by", "undone_by")
        .order_by("-created_at", "-pk")
    )
    return Status(
        200,
        {
            "name": dataset.name,
            "verdict_scope": dataset.verdict_scope,
            "created": dataset.created,
            "batches": dataset.batch_count,
            "runs": [_run(request, run, counts) for run in runs],
            "dismissals": [_dismissal(d) for d in standing],
            "connection": connection_status(dataset),
        },
    )
