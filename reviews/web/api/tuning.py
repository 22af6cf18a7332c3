"""A dataset's review policy and tuning over the API (docs/history.md, docs/api.md): the
same reviews.orchestration.dataset.policies functions as the dataset page and `manage.py tune`."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema, Status

from reviews.engine.history.policy import PolicyError
from reviews.models import Dataset
from reviews.orchestration.dataset import policies
from reviews.web.api import datasets as _converter  # noqa: F401 (registers dataset_name)
from reviews.web.api.auth import READ, UPLOAD
from reviews.web.api.common import JsonInt
from reviews.web.api.schemas import Problem

router = Router(tags=["datasets"])


class TuningOut(Schema):
    policy: dict[str, Any]
    version: int  # 0: the engine's rules as set
    history: list[dict[str, Any]]
    proposals: list[dict[str, Any]]
    root_causes: list[dict[str, Any]]


class ApplyIn(Schema):
    proposal: str  # the proposal's id
    reason: str


class RestoreIn(Schema):
    version: JsonInt  # 0: the engine's rules as set
    reason: str = ""


class VersionOut(Schema):
    number: int
    policy: dict[str, Any]
    source: str
    reason: str


def _dataset(request: HttpRequest, name: str) -> Dataset | None:
    """The token's workspace's dataset of that name (as reviews.web.api.datasets)."""
    if "\x00" in name:
        return None
    return Dataset.objects.filter(workspace_id=request.auth.workspace_id, name=name).first()


def _missing(name: str) -> Status:
    return Status(404, {"detail": f"no dataset named {name[:200]!r}"})


def _version(version) -> dict:
    return {
        "number": version.number,
        "policy": version.policy,
        "source": version.source,
        "reason": version.reason,
    }


@router.get(
    "/datasets/{dataset_name:name}/tuning",
    auth=READ,
    response={200: TuningOut, 401: Problem, 403: Problem, 404: Problem},
    url_name="dataset_tuning",
)
def get_tuning(request: HttpRequest, name: str):
    """The dataset's policy and its history, proposals with their replay, root causes."""
    dataset = _dataset(request, name)
    if dataset is None:
        return _missing(name)
    version, policy = policies.current(dataset)
    found = policies.tune_dataset(dataset)
    return Status(
        200,
        {
            "policy": policy.to_data(),
            "version": version.number if version else 0,
            "history": policies.history(dataset),
            "proposals": found["proposals"],
            "root_causes": found["root_causes"],
        },
    )


@router.post(
    "/datasets/{dataset_name:name}/policy/apply",
    auth=UPLOAD,
    response={
        201: VersionOut,
        400: Problem,
        401: Problem,
        403: Problem,
        404: Problem,
        422: Problem,
    },
    url_name="dataset_policy_apply",
)
def apply(request: HttpRequest, name: str, payload: ApplyIn):
    """Apply a proposal: a new policy version, used by the next sync."""
    dataset = _dataset(request, name)
    if dataset is None:
        return _missing(name)
    try:
        made = policies.apply_proposal(
            dataset, payload.proposal, reason=payload.reason, user=request.auth.user
        )
    except PolicyError as error:
        return Status(400, {"detail": str(error)})
    return Status(201, _version(made))


@router.post(
    "/datasets/{dataset_name:name}/policy/restore",
    auth=UPLOAD,
    response={
        201: VersionOut,
        400: Problem,
        401: Problem,
        403: Problem,
        404: Problem,
        422: Problem,
    },
    url_name="dataset_policy_restore",
)
def restore(request: HttpRequest, name: str, payload: RestoreIn):
    """Restore a policy version (as a new version)."""
    dataset = _dataset(request, name)
    if dataset is None:
        return _missing(name)
    try:
        made = policies.restore(
            dataset, payload.version, reason=payload.reason, user=request.auth.user
        )
    except PolicyError as error:
        return Status(400, {"detail": str(error)})
    return Status(201, _version(made))
