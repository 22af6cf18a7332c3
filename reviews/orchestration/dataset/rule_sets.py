"""Workspace rule sets (docs/rules.md#workspace-rule-sets): team rules written once for a
workspace and used by many of its datasets. Each version of a set is a row; a dataset
using a set holds a copy of the version in its policy, so saving a new version makes a
new policy version (who, when, why) for every dataset using it, and runs, cache keys and
kinds follow those versions as they follow any policy change. A change that would clash
with a dataset's own rule ids is refused whole, before anything is stored."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from reviews.engine.history import policy as engine_policy
from reviews.engine.history.policy import PolicyError, SharedRules
from reviews.engine.team_rules.rulefile import SLUG, TeamRule, check_rules
from reviews.models import Dataset, PolicyVersion, RuleSet
from reviews.orchestration.dataset import policies


def latest(workspace_id: int, name: str) -> RuleSet | None:
    return RuleSet.objects.filter(workspace_id=workspace_id, name=name).order_by("-number").first()


def shared(version: RuleSet) -> SharedRules:
    return SharedRules(version.name, version.number, tuple(check_rules(version.rules)))


def users(workspace_id: int, name: str) -> list[Dataset]:
    """The workspace's datasets whose current policy uses set `name`."""
    return [
        dataset
        for dataset in Dataset.objects.filter(workspace_id=workspace_id).order_by("name")
        if any(s.name == name for s in policies.current(dataset)[1].rule_sets)
    ]


def save_set(
    workspace_id: int, name: str, rules: list[TeamRule], *, reason: str, user=None
) -> tuple[RuleSet, list[PolicyVersion]]:
    """A new version of the set, and a new policy version for each dataset using it; the
    rules of its latest version again make none (that version, no dataset)."""
    if not SLUG.fullmatch(name):
        raise PolicyError(f"rule set name {name!r} must be a slug (a-z, 0-9, _)")
    if not rules:
        raise PolicyError("the file holds no rules")
    reason = policies.checked_reason(reason, "a rule set")
    data = [rule.as_data() for rule in rules]
    previous = latest(workspace_id, name)
    if previous is not None and previous.rules == data:
        return previous, []  # the same rules: no new version, nothing for its datasets
    number = (previous.number + 1) if previous else 1
    using = users(workspace_id, name)
    updated = SharedRules(name, number, tuple(rules))
    changed = {dataset.pk: policies.current(dataset)[1].with_rule_set(updated) for dataset in using}
    problems = []
    for dataset in using:  # every dataset must take it before anything is stored
        try:
            engine_policy.check(changed[dataset.pk])
        except PolicyError as error:
            problems.append(f"dataset {dataset.name}: {error}")
    if problems:
        raise PolicyError("; ".join(problems))
    with transaction.atomic():
        version = RuleSet.objects.create(
            workspace_id=workspace_id,
            name=name,
            number=number,
            rules=data,
            reason=reason,
            created_by=user if user is not None and user.is_authenticated else None,
        )
        made = [
            policies.save(
                dataset,
                changed[dataset.pk],
                reason=f"workspace rule set {name} version {number}: {reason}",
                user=user,
            )
            for dataset in using
        ]
    return version, made


def use(dataset: Dataset, name: str, *, reason: str = "", user=None) -> PolicyVersion:
    """A new policy version of the dataset using the set's latest version; the current
    version when it uses that one already."""
    version = latest(dataset.workspace_id, name)
    if version is None:
        raise PolicyError(f"the workspace has no rule set {name!r}")
    current_version, policy = policies.current(dataset)
    if any(s.name == name and s.version == version.number for s in policy.rule_sets):
        return current_version  # already uses that version: no new one
    return policies.save(
        dataset,
        policy.with_rule_set(shared(version)),
        reason=reason or f"uses workspace rule set {name} (version {version.number})",
        user=user,
    )


def stop_using(dataset: Dataset, name: str, *, reason: str = "", user=None) -> PolicyVersion:
    _, policy = policies.current(dataset)
    if not any(s.name == name for s in policy.rule_sets):
        raise PolicyError(f"dataset {dataset.name} does not use rule set {name!r}")
    return policies.save(
        dataset,
        policy.without_rule_set(name),
        reason=reason or f"stops using workspace rule set {name}",
        user=user,
    )


def sets_of(workspace_id: int) -> list[dict[str, Any]]:
    """Each set's latest version: {name, version, rules, reason, by, at, datasets}."""
    names = (
        RuleSet.objects.filter(workspace_id=workspace_id)
        .order_by("name")
        .values_list("name", flat=True)
        .distinct()
    )
    out = []
    for name in names:
        version = latest(workspace_id, name)
        out.append(
            {
                "name": name,
                "version": version.number,
                "rules": version.rules,
                "reason": version.reason,
                "by": version.created_by.username if version.created_by else "",
                "at": version.created_at.isoformat(),
                "datasets": [d.name for d in users(workspace_id, name)],
            }
        )
    return out
