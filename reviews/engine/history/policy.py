"""A dataset's review policy as data (docs/history.md): overrides of the engine's Rules,
kinds switched off, a kind's severity changed, the verdict scope. Plain Python, no Django.

The policy is applied in two pure steps: `rules_for(base, policy)` gives the Rules the
detectors run with (Rules.with_overrides, validated), and `apply(findings, policy)` is the
post-detection filter (kinds off dropped, severities changed). A policy that makes a
critical kind quieter than `warning` (off, or a lower severity), or changes a threshold a
critical kind reads, needs a staff member's break-glass reason (`check`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from reviews.engine.findings import RawFinding, Severity
from reviews.engine.rules import Rules
from reviews.engine.specialists import KINDS
from reviews.engine.specialists.spec import Kind

VERDICT_SCOPES = ("", "new", "all")  # "": the dataset's own setting (models.Dataset)


class PolicyError(ValueError):
    """A policy that cannot be used, with a message naming the field."""


@dataclass(frozen=True, slots=True)
class Policy:
    rules: Mapping[str, int | Decimal] = field(default_factory=dict)
    off: frozenset[str] = frozenset()
    severity: Mapping[str, str] = field(default_factory=dict)
    verdict_scope: str = ""
    break_glass: str = ""  # a staff member's reason for making a critical kind quieter

    # --- as JSON --------------------------------------------------------------------

    def to_data(self) -> dict[str, Any]:
        return {
            "rules": {name: str(value) for name, value in sorted(self.rules.items())},
            "off": sorted(self.off),
            "severity": dict(sorted(self.severity.items())),
            "verdict_scope": self.verdict_scope,
            "break_glass": self.break_glass,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any] | None) -> Policy:
        """The policy `data` describes, its rule values coerced and checked (PolicyError
        naming the field)."""
        data = data or {}
        unknown = set(data) - {"rules", "off", "severity", "verdict_scope", "break_glass"}
        if unknown:
            raise PolicyError(f"unknown policy field(s): {', '.join(sorted(unknown))}")
        try:
            checked = Rules().with_overrides(dict(data.get("rules") or {}))
        except ValueError as error:
            raise PolicyError(str(error)) from None
        rules = {name: getattr(checked, name) for name in data.get("rules") or {}}
        return cls(
            rules=rules,
            off=frozenset(data.get("off") or ()),
            severity=dict(data.get("severity") or {}),
            verdict_scope=str(data.get("verdict_scope") or ""),
            break_glass=str(data.get("break_glass") or "").strip(),
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
        )

    def severities_of(self, kind: Kind) -> tuple[str, ...]:
        """What `kind` can report under this policy: nothing when it is off, the
        changed severity, else the kind's own."""
        if kind.name in self.off:
            return ()
        changed = self.severity.get(kind.name)
        return (changed,) if changed else tuple(s.value for s in kind.severities)

    @property
    def empty(self) -> bool:
        return not (self.rules or self.off or self.severity or self.verdict_scope)


EMPTY = Policy()


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
    for kind in sorted(policy.off | set(policy.severity)):
        if kind not in KINDS:
            raise PolicyError(f"unknown kind {kind!r}; known: {', '.join(sorted(KINDS))}")
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
    return rows


def _on(kind: str, data: dict) -> str:
    return "off" if kind in data["off"] else "on"


def _row(what: str, before: Any, after: Any) -> dict[str, str]:
    return {"what": what, "before": str(before or ""), "after": str(after or "")}
