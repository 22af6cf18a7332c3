"""A dataset's review policy as data (reviews.engine.history.policy): validated, applied as the
Rules' overrides and a post-detection filter, guarded for criticals, diffed."""

from __future__ import annotations

from decimal import Decimal

import pytest

from reviews.engine.findings import RawFinding
from reviews.engine.history.policy import (
    Policy,
    PolicyError,
    apply,
    check,
    critical_kinds,
    diff,
    rules_for,
)
from reviews.engine.rules import Rules
from reviews.engine.specialists import KINDS


def finding(kind: str, severity: str) -> RawFinding:
    return RawFinding("c", kind, severity, "t", "d", ["r1"])


def test_the_filter_drops_kinds_off_and_sets_severities():
    policy = Policy(off=frozenset({"never_enriched"}), severity={"stale_enrichment": "suggestion"})
    check(policy)
    found = apply(
        [
            finding("never_enriched", "suggestion"),
            finding("stale_enrichment", "warning"),
            finding("won_without_amount", "critical"),
        ],
        policy,
    )
    assert [(f.kind, f.severity) for f in found] == [
        ("stale_enrichment", "suggestion"),
        ("won_without_amount", "critical"),
    ]


def test_rules_overrides_are_validated_and_round_trip_as_data():
    policy = Policy.from_data({"rules": {"stale_enrichment_days": "365"}})
    assert rules_for(Rules(), policy).stale_enrichment_days == 365
    assert Policy.from_data(policy.to_data()) == policy
    with pytest.raises(PolicyError, match="stale_enrichment_days"):
        Policy.from_data({"rules": {"stale_enrichment_days": "-1"}})
    with pytest.raises(PolicyError, match="unknown rule"):
        Policy.from_data({"rules": {"nope": 1}})
    with pytest.raises(PolicyError, match="unknown kind"):
        check(Policy(off=frozenset({"nope"})))


def test_a_critical_kind_made_quieter_needs_break_glass():
    assert critical_kinds() == {
        name for name, kind in KINDS.items() if "critical" in kind.severities
    }
    kind = sorted(critical_kinds())[0]
    for quiet in (Policy(off=frozenset({kind})), Policy(severity={kind: "suggestion"})):
        with pytest.raises(PolicyError, match="break-glass"):
            check(quiet)
    check(Policy(severity={kind: "warning"}))  # warning is not quieter than warning
    check(Policy(off=frozenset({kind}), break_glass="a staff member's reason"))


def test_diff_between_versions():
    before = Policy(rules={"amount_typo_factor": Decimal("100")})
    after = Policy(rules={"amount_typo_factor": Decimal("250")}, off=frozenset({"never_enriched"}))
    assert diff(before, after) == [
        {"what": "rule amount_typo_factor", "before": "100", "after": "250"},
        {"what": "kind never_enriched", "before": "on", "after": "off"},
    ]
