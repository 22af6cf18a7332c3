"""A dataset's own rules over the API (docs/rules.md#a-teams-own-rules, docs/api.md): the
same reviews.orchestration.dataset.team_rules functions as `manage.py rules` and the
dataset page. A rule file is sent as JSON (`{"rules": [...]}`) or as its YAML text
(`{"file": "..."}`); one that is refused answers 400 with every problem, nothing stored."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema, Status

from reviews.engine.history.policy import PolicyError
from reviews.engine.team_rules.rulefile import RuleFileError, TeamRule, check_rules, load
from reviews.orchestration.dataset import policies, team_rules
from reviews.web.api.auth import READ, UPLOAD
from reviews.web.api.schemas import Problem
from reviews.web.api.tuning import _dataset, _missing

router = Router(tags=["datasets"])


class RulesIn(Schema):
    rules: list[dict[str, Any]] | None = None  # the rule file as JSON
    file: str | None = None  # or its text (YAML or JSON)
    reason: str = ""


class RulesOut(Schema):
    rules: list[dict[str, Any]]  # the dataset's own
    rule_sets: list[dict[str, Any]]  # the workspace rule sets it uses: {name, version, rules}
    version: int  # 0: no policy version yet
    history: list[dict[str, Any]]


class RefusedOut(Schema):
    """A refused rule file: `problems` lists every one (a body that is not JSON at all
    gets ninja's own 400, `detail` alone)."""

    detail: str | list[dict[str, Any]]
    problems: list[str] = []


class RulesVersionOut(Schema):
    number: int
    reason: str
    rules: list[dict[str, Any]]
    changes: dict[str, str] = {}  # rule id -> added, changed or unchanged


def parse_rules(payload: RulesIn) -> list[TeamRule]:
    if (payload.rules is None) == (payload.file is None):
        raise RuleFileError(['send the rules as "rules" (a list) or "file" (its text), one'])
    if payload.file is not None:
        return load(payload.file)
    return check_rules(payload.rules)


def refused(error: RuleFileError) -> Status:
    return Status(
        400, {"detail": "the rule file is refused; nothing stored", "problems": error.problems}
    )


def _version(version) -> dict:
    return {
        "number": version.number,
        "reason": version.reason,
        "rules": version.policy.get("team_rules", []),
    }


def policy_refused(error: PolicyError) -> Status:
    """A change the dataset's (or a rule set's) policy refuses, as a refused file is."""
    return Status(400, {"detail": str(error), "problems": [str(error)]})


ERRORS = {400: RefusedOut, 401: Problem, 403: Problem, 404: Problem, 422: Problem}


@router.get(
    "/datasets/{dataset_name:name}/rules",
    auth=READ,
    response={200: RulesOut, 401: Problem, 403: Problem, 404: Problem},
    url_name="dataset_rules",
)
def list_rules(request: HttpRequest, name: str):
    """The dataset's team rules and the versions that changed them (who, when, why)."""
    dataset = _dataset(request, name)
    if dataset is None:
        return _missing(name)
    version, policy = policies.current(dataset)
    return Status(
        200,
        {
            "rules": [rule.as_data() for rule in policy.team_rules],
            "rule_sets": [shared.as_data() for shared in policy.rule_sets],
            "version": version.number if version else 0,
            "history": team_rules.history(dataset),
        },
    )


@router.post(
    "/datasets/{dataset_name:name}/rules",
    auth=UPLOAD,
    response={200: RulesVersionOut, 201: RulesVersionOut, **ERRORS},
    url_name="dataset_rules_add",
)
def add_rules(request: HttpRequest, name: str, payload: RulesIn):
    """Add the rules (one with an id already there replaces it): a new policy version."""
    dataset = _dataset(request, name)
    if dataset is None:
        return _missing(name)
    try:
        rules = parse_rules(payload)
        reason = payload.reason or "team rules added over the API"
        added = team_rules.add(dataset, rules, reason=reason, user=request.auth.user)
    except RuleFileError as error:
        return refused(error)
    except PolicyError as error:
        return policy_refused(error)
    if added.version is None:  # nothing changed: the current version, no new one
        return Status(200, {**_version(policies.current(dataset)[0]), "changes": added.changes})
    return Status(201, {**_version(added.version), "changes": added.changes})


@router.post(
    "/datasets/{dataset_name:name}/rules/preview",
    auth=READ,
    response={200: dict[str, Any], **ERRORS},
    url_name="dataset_rules_preview",
)
def preview_rules(request: HttpRequest, name: str, payload: RulesIn):
    """The rules run on the last sync and replayed over the stored ones; nothing saved."""
    dataset = _dataset(request, name)
    if dataset is None:
        return _missing(name)
    try:
        return Status(200, team_rules.preview(dataset, parse_rules(payload)))
    except RuleFileError as error:
        return refused(error)
    except PolicyError as error:
        return policy_refused(error)


@router.delete(
    "/datasets/{dataset_name:name}/rules/{rule_id}",
    auth=UPLOAD,
    response={200: RulesVersionOut, **ERRORS},
    url_name="dataset_rules_remove",
)
def remove_rule(request: HttpRequest, name: str, rule_id: str, reason: str = ""):
    """Remove one rule: a new policy version."""
    dataset = _dataset(request, name)
    if dataset is None:
        return _missing(name)
    try:
        made = team_rules.remove(
            dataset,
            rule_id,
            reason=reason or f"team rule {rule_id} removed over the API",
            user=request.auth.user,
        )
    except PolicyError as error:
        return policy_refused(error)
    return Status(200, _version(made))
