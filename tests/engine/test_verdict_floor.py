"""coordinator.no_more_lenient: a model's findings never give a verdict more lenient
than the rules' own with every rule finding demoted to a suggestion; and
not_clean_when_degraded: a verdict reached without a specialist is never approve."""

from __future__ import annotations

import pytest

from reviews.engine import coordinator
from reviews.engine.findings import RawFinding


def finding(severity: str) -> RawFinding:
    return RawFinding(
        category="dedup",
        kind="contact_same_person",
        severity=severity,
        title="t",
        detail="d",
        record_ids=["ct_1", "ct_2"],
    )


@pytest.mark.parametrize(
    ("model_decision", "rules", "verdict"),
    [
        ("approve", [finding("warning")], "approve_with_comments"),
        ("approve", [finding("critical")], "approve_with_comments"),
        ("approve", [], "approve"),
        ("approve_with_comments", [finding("suggestion")], "approve_with_comments"),
        ("request_changes", [finding("warning")], "request_changes"),  # stricter: kept
        ("request_changes", [], "request_changes"),
    ],
)
def test_the_verdict_is_never_more_lenient_than_the_rules_demoted(model_decision, rules, verdict):
    assert coordinator.no_more_lenient(model_decision, rules) == verdict


@pytest.mark.parametrize(
    ("decision", "failed", "verdict"),
    [
        ("approve", ["dedup"], "approve_with_comments"),  # unknown, not clean
        ("approve_with_comments", ["dedup"], "approve_with_comments"),
        ("request_changes", ["dedup", "pipeline"], "request_changes"),
        ("approve", [], "approve"),
    ],
)
def test_a_degraded_verdict_is_never_approve(decision, failed, verdict):
    assert coordinator.not_clean_when_degraded(decision, failed) == verdict


def test_fuse_never_approves_without_a_specialist():
    counts = {"companies": 1, "contacts": 0, "deals": 0}
    assert coordinator.fuse([], counts, []).decision == "approve"
    assert coordinator.fuse([], counts, ["freshness"]).decision == "approve_with_comments"
