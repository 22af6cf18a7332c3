"""A dataset's review policy as data (docs/history.md): overrides of the engine's Rules,
kinds switched off, a kind's severity changed, the verdict scope, and the team's own
rules (reviews.engine.team_rules). Plain Python, no Django.

The kinds a run can report are the registry's and its policy's team rules': `kinds_of`
is the one lookup for both.

The policy is applied in two pure steps: `rules_for(base, policy)` gives the Rules the
detectors run with (Rules.with_overrides, validated), and `apply(findings, policy)` is the
post-detection filter (kinds off dropped, severities changed). A policy that makes a
critical kind quieter than `warning` (off, or a lower severity), or changes a threshold a
critical kind reads, needs a staff member's break-glass reason (`check`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from reviews.engine.findings import RawFinding, Severity
from reviews.engine.rules import Rules
from reviews.engine.specialists import KINDS
from reviews.engine.specialists.spec import Kind
from reviews.engine.team_rules.rulefile import FIELDS, RuleFileError, TeamRule, check_rules

VERDICT_SCOPES = ("", "new", "all")  # "": the dataset's own setting (models.Dataset)


class PolicyError(ValueError):
    """A policy that cannot be used, with a message naming the field."""


@dataclass(frozen=True, slots=True)
class SharedRules:
    """A workspace rule set a dataset uses, as of one of its versions (copied into the
    dataset's policy, so a run, its cache key and its kinds follow the version)."""

    name: str
    version: int
    rules: tuple[TeamRule, ...]

    def as_data(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "rules": [rule.as_data() for rule in self.rules],
        }


@dataclass(frozen=True, slots=True)
class Policy:
    rules: Mapping[str, int | Decimal] = field(default_factory=dict)
    off: frozenset[str] = frozenset()
    severity: Mapping[str, str] = field(default_factory=dict)
    verdict_scope: str = ""
    break_glass: str = ""  # a staff member's reason for making a critical kind quieter
    team_rules: tuple[TeamRule, ...] = ()  # the team's own rules, in their order
    rule_sets: tuple[SharedRules, ...] = ()  # workspace rule sets it uses

    # --- as JSON --------------------------------------------------------------------

    def to_data(self) -> dict[str, Any]:
        data = {
            "rules": {name: str(value) for name, value in sorted(self.rules.items())},
            "off": sorted(self.off),
            "severity": dict(sorted(self.severity.items())),
            "verdict_scope": self.verdict_scope,
            "break_glass": self.break_glass,
        }
        if self.team_rules:  # absent rather than empty: versions stored before keep their key
            data["team_rules"] = [rule.as_data() for rule in self.team_rules]
        if self.rule_sets:
            data["rule_sets"] = [shared.as_data() for shared in self.rule_sets]
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any] | None) -> Policy:
        """The policy `data` describes, its rule values coerced and checked (PolicyError
        naming the field)."""
        data = data or {}
        unknown = set(data) - {
            "rules",
            "off",
            "severity",
            "verdict_scope",
            "break_glass",
            "team_rules",
            "rule_sets",
        }
        if unknown:
            raise PolicyError(f"unknown policy field(s): {', '.join(sorted(unknown))}")
        try:
            checked = Rules().with_overrides(dict(data.get("rules") or {}))
        except ValueError as error:
            raise PolicyError(str(error)) from None
        rules = {name: getattr(checked, name) for name in data.get("rules") or {}}
        try:
            team_rules = tuple(check_rules(data.get("team_rules") or ()))
            rule_sets = tuple(
                SharedRules(str(s["name"]), int(s["version"]), tuple(check_rules(s["rules"])))
                for s in data.get("rule_sets") or ()
            )
        except RuleFileError as error:
            raise PolicyError("; ".join(error.problems)) from None
        except (KeyError, TypeError, ValueError):
            raise PolicyError("rule_sets: each is {name, version, rules}") from None
        return cls(
            rules=rules,
            off=frozenset(data.get("off") or ()),
            severity=dict(data.get("severity") or {}),
            verdict_scope=str(data.get("verdict_scope") or ""),
            break_glass=str(data.get("break_glass") or "").strip(),
            team_rules=team_rules,
            rule_sets=rule_sets,
        )

    def merged(self, other: Policy) -> Policy:
        """This policy with `other`'s changes on top (a proposal applied to a policy)."""
        return Policy(
            rules={**self.rules, **other.rules},
            off=(self.off | other.off) - frozenset(other.severity),
            severity={
                **{k: v for k, v in self.severity.items() if k not in other.off},
                **other.severity,
            },
            verdict_scope=other.verdict_scope or self.verdict_scope,
            break_glass=other.break_glass or self.break_glass,
            team_rules=other.team_rules or self.team_rules,
            rule_sets=other.rule_sets or self.rule_sets,
        )

    def with_team_rules(self, team_rules: Iterable[TeamRule]) -> Policy:
        """This policy with its team rules replaced by `team_rules`."""
        return replace(self, team_rules=tuple(team_rules))

    def with_rule_set(self, shared: SharedRules) -> Policy:
        """This policy using `shared` (in place of another version of the same set)."""
        kept = [s for s in self.rule_sets if s.name != shared.name]
        return replace(self, rule_sets=(*kept, shared))

    def without_rule_set(self, name: str) -> Policy:
        return replace(self, rule_sets=tuple(s for s in self.rule_sets if s.name != name))

    @property
    def all_team_rules(self) -> tuple[TeamRule, ...]:
        """The rules a run under this policy runs: the dataset's own, then its sets'."""
        return (*self.team_rules, *(rule for shared in self.rule_sets for rule in shared.rules))

    def severities_of(self, kind: Kind) -> tuple[str, ...]:
        """What `kind` can report under this policy: nothing when it is off, the
        changed severity, else the kind's own."""
        if kind.name in self.off:
            return ()
        changed = self.severity.get(kind.name)
        return (changed,) if changed else tuple(s.value for s in kind.severities)

    @property
    def empty(self) -> bool:
        return not (
            self.rules
            or self.off
            or self.severity
            or self.verdict_scope
            or self.team_rules
            or self.rule_sets
        )


EMPTY = Policy()


def kinds_of(policy: Policy | None) -> Mapping[str, Kind]:
    """Every kind a run under `policy` can report, by name: the registry's, and the
    team's rules' (whose ids never clash with the registry's: rulefile refuses them).
    The one lookup for a kind: pages, the fix plan, tuning and checks go through it."""
    if policy is None or not policy.all_team_rules:
        return KINDS
    return {**KINDS, **{rule.id: rule.kind for rule in policy.all_team_rules}}


def critical_kinds() -> frozenset[str]:
    """Kinds a detector can report as critical (from the specialist registry)."""
    return frozenset(name for name, kind in KINDS.items() if Severity.CRITICAL in kind.severities)


def critical_rules() -> frozenset[str]:
    """The Rules fields some critical kind reads."""
    return frozenset(rule for name in critical_kinds() for rule in KINDS[name].rules)


def quieter_criticals(policy: Policy) -> list[str]:
    """What in `policy` makes a critical kind quieter: each as a sentence."""
    found = []
    for kind in sorted(critical_kinds()):
        if kind in policy.off:
            found.append(f"{kind} is switched off")
        elif policy.severity.get(kind) == Severity.SUGGESTION:
            found.append(f"{kind} is lowered to suggestion")
    for rule in sorted(critical_rules() & set(policy.rules)):
        found.append(f"rule {rule} (read by a critical kind) is changed")
    return found


def check(policy: Policy) -> None:
    """PolicyError if the policy names an unknown kind or severity, a kind's severity it
    never has, or makes a critical kind quieter without a break-glass reason."""
    twice = _ids_used_twice(policy)
    if twice:
        said = [f"in {where}" if len(twice) == 1 else f"{i} in {where}" for i, where in twice]
        raise PolicyError(
            f"team rule id(s) {', '.join(i for i, _ in twice)} used twice: "
            f"{'; '.join(said)}; rename one"
        )
    kinds = kinds_of(policy)
    for kind in sorted(policy.off | set(policy.severity)):
        if kind not in kinds:
            raise PolicyError(f"unknown kind {kind!r}; known: {', '.join(sorted(kinds))}")
    for kind, severity in sorted(policy.severity.items()):
        if severity not in {s.value for s in Severity}:
            raise PolicyError(f"kind {kind}: unknown severity {severity!r}")
    if policy.verdict_scope not in VERDICT_SCOPES:
        raise PolicyError(f"unknown verdict scope {policy.verdict_scope!r}")
    quieter = quieter_criticals(policy)
    if quieter and not policy.break_glass:
        raise PolicyError(
            "a critical kind may not be made quieter than warning without a staff "
            f"member's break-glass reason: {'; '.join(quieter)}"
        )


def _ids_used_twice(policy: Policy) -> list[tuple[str, str]]:
    """(id, where it is) for each team rule id the policy holds more than once, where
    naming only the places that hold it: the dataset's own rules, a rule set."""
    places: dict[str, list[str]] = {}
    for rule in policy.team_rules:
        places.setdefault(rule.id, []).append("the dataset's own rules")
    for shared in policy.rule_sets:
        for rule in shared.rules:
            places.setdefault(rule.id, []).append(
                f"rule set {shared.name} (version {shared.version})"
            )
    return [
        (rule_id, " and ".join(where) if len(set(where)) > 1 else f"{where[0]}, twice")
        for rule_id, where in sorted(places.items())
        if len(where) > 1
    ]


def rules_for(base: Rules, policy: Policy) -> Rules:
    """The Rules the detectors run with under `policy`."""
    try:
        return base.with_overrides(dict(policy.rules)) if policy.rules else base
    except ValueError as error:
        raise PolicyError(str(error)) from None


def apply(findings: Iterable[RawFinding], policy: Policy) -> list[RawFinding]:
    """The post-detection filter: findings of kinds switched off dropped, severities
    changed. The findings are changed in place and returned in their order."""
    if not policy.off and not policy.severity:
        return list(findings)
    kept = []
    for finding in findings:
        if finding.kind in policy.off:
            continue
        severity = policy.severity.get(finding.kind)
        if severity:
            finding.severity = severity
        kept.append(finding)
    return kept


def diff(before: Policy, after: Policy) -> list[dict[str, str]]:
    """What changed from `before` to `after`: [{"what", "before", "after"}] ("" is
    "the default")."""
    a, b = before.to_data(), after.to_data()
    rows = []
    for name in sorted(set(a["rules"]) | set(b["rules"])):
        if a["rules"].get(name) != b["rules"].get(name):
            rows.append(_row(f"rule {name}", a["rules"].get(name), b["rules"].get(name)))
    for kind in sorted(set(a["off"]) ^ set(b["off"])):
        rows.append(_row(f"kind {kind}", _on(kind, a), _on(kind, b)))
    for kind in sorted(set(a["severity"]) | set(b["severity"])):
        if a["severity"].get(kind) != b["severity"].get(kind):
            rows.append(
                _row(f"severity of {kind}", a["severity"].get(kind), b["severity"].get(kind))
            )
    for key in ("verdict_scope", "break_glass"):
        if a[key] != b[key]:
            rows.append(_row(key.replace("_", " "), a[key], b[key]))
    rows += team_rules_diff(before.all_team_rules, after.all_team_rules)
    old = {s.name: s.version for s in before.rule_sets}
    new = {s.name: s.version for s in after.rule_sets}
    for name in sorted(set(old) | set(new)):
        if old.get(name) != new.get(name):
            rows.append(_row(f"rule set {name}", _version(old.get(name)), _version(new.get(name))))
    return rows


def _version(number: int | None) -> str:
    return f"version {number}" if number else ""


def team_rules_diff(before: Iterable[TeamRule], after: Iterable[TeamRule]) -> list[dict]:
    """Each team rule added, changed or removed, as a diff row (its `when` and severity)."""
    old = {rule.id: rule for rule in before}
    new = {rule.id: rule for rule in after}
    rows = []
    for rule_id in [*old, *(i for i in new if i not in old)]:
        before, after = old.get(rule_id), new.get(rule_id)
        if before is not None and after is not None and before != after:
            # a change: the fields that changed, each as it was and as it is
            fields = [f for f in FIELDS if getattr(before, f) != getattr(after, f)]
            rows.append(
                _row(
                    f"team rule {rule_id}",
                    "; ".join(f"{f}: {getattr(before, f)}" for f in fields),
                    "; ".join(f"{f}: {getattr(after, f)}" for f in fields),
                )
            )
        elif before != after:
            rows.append(_row(f"team rule {rule_id}", _said(before), _said(after)))
    return rows


def _said(rule: TeamRule | None) -> str:
    return f"{rule.severity} on {rule.object} when {rule.when}" if rule else ""


def _on(kind: str, data: dict) -> str:
    return "off" if kind in data["off"] else "on"


def _row(what: str, before: Any, after: Any) -> dict[str, str]:
    return {"what": what, "before": str(before or ""), "after": str(after or "")}
