"""coordinator.no_more_lenient: a model's findings never give a verdict more lenient
than the rules' own with every rule finding demoted to a suggestion."""

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
