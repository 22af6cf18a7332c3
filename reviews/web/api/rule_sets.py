"""Workspace rule sets over the API (docs/rules.md#workspace-rule-sets, docs/api.md): the
same reviews.orchestration.dataset.rule_sets functions as `manage.py rules set-add | use |
unuse | sets`, for the token's workspace. A set's file is sent as the dataset rules' body
(reviews.web.api.team_rules.RulesIn); a refused file or a change some dataset cannot take
answers 400 with every problem, and nothing is stored."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema, Status

from reviews.engine.history.policy import PolicyError
from reviews.engine.team_rules.rulefile import RuleFileError
from reviews.orchestration.dataset import policies, rule_sets
from reviews.web.api.auth import READ, UPLOAD
from reviews.web.api.schemas import Problem
from reviews.web.api.team_rules import (
    ERRORS,
    RefusedOut,
    RulesIn,
    parse_rules,
    policy_refused,
    refused,
)
from reviews.web.api.tuning import _dataset, _missing

router = Router(tags=["rule sets"])


class RuleSetsOut(Schema):
    # each set's latest version: {name, version, rules, reason, by, at, datasets}
    rule_sets: list[dict[str, Any]]


class RuleSetVersionOut(Schema):
    name: str
    version: int
    reason: str
    rules: list[dict[str, Any]]
    datasets: list[str]  # those using it, each given a new policy version


class UsedOut(Schema):
    number: int  # the dataset's new policy version
    reason: str
    rule_sets: list[dict[str, Any]]  # the sets it uses now: {name, version, rules}


@router.get(
    "/rule-sets",
    auth=READ,
    response={200: RuleSetsOut, 401: Problem, 403: Problem},
    url_name="rule_sets",
)
def list_sets(request: HttpRequest):
    """The workspace's rule sets, each at its latest version, with the datasets using it."""
    return Status(200, {"rule_sets": rule_sets.sets_of(request.auth.workspace_id)})


@router.post(
    "/rule-sets/{set_name}",
    auth=UPLOAD,
    response={
        200: RuleSetVersionOut,
        201: RuleSetVersionOut,
        400: RefusedOut,
        401: Problem,
        403: Problem,
        422: Problem,
    },
    url_name="rule_set_save",
)
def save_set(request: HttpRequest, set_name: str, payload: RulesIn):
    """A new version of the set (the first makes it); each dataset using it gets a new
    policy version. The rules of its latest version again: 200 with that version."""
    before = rule_sets.latest(request.auth.workspace_id, set_name)
    try:
        version, made = rule_sets.save_set(
            request.auth.workspace_id,
            set_name,
            parse_rules(payload),
            reason=payload.reason,
            user=request.auth.user,
        )
    except RuleFileError as error:
        return refused(error)
    except PolicyError as error:
        return policy_refused(error)
    unchanged = before is not None and version.pk == before.pk
    return Status(
        200 if unchanged else 201,
        {
            "name": version.name,
            "version": version.number,
            "reason": version.reason,
            "rules": version.rules,
            "datasets": [policy_version.dataset.name for policy_version in made],
        },
    )


@router.post(
    "/datasets/{dataset_name:name}/rule-sets/{set_name}",
    auth=UPLOAD,
    response={200: UsedOut, 201: UsedOut, **ERRORS},
    url_name="dataset_rule_set_use",
)
def use_set(request: HttpRequest, name: str, set_name: str, reason: str = ""):
    """The dataset uses the set's latest version: a new policy version (200 with the
    current one when it uses that version already)."""
    return _change_use(request, name, set_name, rule_sets.use, reason, 201)


@router.delete(
    "/datasets/{dataset_name:name}/rule-sets/{set_name}",
    auth=UPLOAD,
    response={200: UsedOut, **ERRORS},
    url_name="dataset_rule_set_unuse",
)
def stop_using_set(request: HttpRequest, name: str, set_name: str, reason: str = ""):
    """The dataset stops using the set: a new policy version."""
    return _change_use(request, name, set_name, rule_sets.stop_using, reason, 200)


def _change_use(request, name: str, set_name: str, change, reason: str, status: int) -> Status:
    dataset = _dataset(request, name)
    if dataset is None:
        return _missing(name)
    before = policies.current(dataset)[0]
    try:
        made = change(dataset, set_name, reason=reason, user=request.auth.user)
    except PolicyError as error:
        return policy_refused(error)
    return Status(
        200 if before is not None and made.pk == before.pk else status,
        {
            "number": made.number,
            "reason": made.reason,
            "rule_sets": made.policy.get("rule_sets", []),
        },
    )
