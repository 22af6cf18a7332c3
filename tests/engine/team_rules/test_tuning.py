"""Team rules in tuning: observed like any kind on stored syncs, proposed off (or
quieter) when the team dismisses them, and replayed over the syncs."""

from __future__ import annotations

import json

from reviews.engine.history.observe import observe
from reviews.engine.history.policy import EMPTY, Policy
from reviews.engine.history.replay import replay
from reviews.engine.history.tune import propose
from reviews.engine.rules import Rules
from reviews.engine.team_rules.rulefile import load
from tests.engine.team_rules.exports import COMPANIES, export_batch

RULE = {
    "id": "no_phone",
    "object": "companies",
    "when": '"Phone Number" IS NULL OR "Phone Number" NOT LIKE \'+%\'',
    "severity": "warning",
    "title": "Company phone not international",
    "fix": "Fix it",
}


def companies_without_phone(n: int) -> list[list[str]]:
    extra = [
        [f"96{i:02}", f"Company {i}", f"c{i}.example", "Germany", "", "Lead", "Ben Li", "", "",
         "2026-07-01 10:00"]
        for i in range(n)
    ]  # fmt: skip
    return [*COMPANIES, *extra]


def test_a_dismissed_team_rule_is_proposed_off_and_replayed():
    policy = EMPTY.with_team_rules(load(json.dumps({"rules": [RULE]})))
    batches = [export_batch(companies=companies_without_phone(4)) for _ in range(2)]
    observed = [observe(batch, Rules(), policy) for batch in batches]
    mine = {s.fingerprint: s.record_ids for s in observed[-1] if s.kind == "no_phone"}
    assert sorted(mine.values()) == [
        ("9002",), ("9004",), ("9600",), ("9601",), ("9602",), ("9603",)
    ]  # fmt: skip
    [proposal] = [p for p in propose(observed, set(mine), policy) if p.kind == "no_phone"]
    assert proposal.policy == Policy(off=frozenset({"no_phone"}))
    assert proposal.why == "all 6 no_phone findings were dismissed"
    result = replay(batches, Rules(), policy, proposal.policy, set(mine))
    assert (result["dismissed_hidden"], result["kept_hidden"]) == (6, 0)
