"""Workspace rule sets over the API (docs/api.md): a set saved in versions, used and no
longer used by a dataset, each change a policy version; a refused file or a clash with a
dataset's own rule answers 400 with every problem, and nothing is stored."""

from __future__ import annotations

import json

import httpx
import pytest

from reviews.apiauth.tokens import token_workspace
from reviews.models import Dataset, PolicyVersion, RuleSet
from tests.web.api.conftest import bearer

pytestmark = [pytest.mark.django_db(transaction=True)]

UNOWNED = {
    "id": "open_deal_unowned",
    "object": "deals",
    "when": "owner IS NULL AND is_closed IS NOT TRUE",
    "severity": "warning",
    "title": "Open deal without owner",
    "fix": "Assign it",
}
JSON = {"Content-Type": "application/json"}
NO_DOMAIN = """
rules:
  - {id: company_without_domain, object: companies, severity: suggestion,
     title: Company without domain, fix: Add it, when: "domain IS NULL"}
"""


@pytest.fixture
def datasets(api_user) -> list[str]:
    workspace_id = token_workspace(api_user, None).pk  # the user's only one, the tokens'
    for name in ("emea", "amer"):
        Dataset.objects.create(workspace_id=workspace_id, name=name)
    return ["emea", "amer"]


def test_a_set_saved_used_versioned_and_left(http, datasets):
    first = http.post("/rule-sets/hygiene", json={"rules": [UNOWNED], "reason": "our standard"})
    assert first.status_code == 201, first.text
    assert first.json() == {
        "name": "hygiene",
        "version": 1,
        "reason": "our standard",
        "rules": [UNOWNED],
        "datasets": [],
    }
    used = http.post("/datasets/emea/rule-sets/hygiene", params={"reason": "we follow it"})
    assert used.status_code == 201, used.text
    assert used.json()["reason"] == "we follow it"
    assert used.json()["rule_sets"] == [{"name": "hygiene", "version": 1, "rules": [UNOWNED]}]

    second = http.post(
        "/rule-sets/hygiene", json={"file": NO_DOMAIN, "reason": "domains matter more"}
    )
    assert (second.status_code, second.json()["version"]) == (201, 2)
    assert second.json()["datasets"] == ["emea"]  # given a new policy version
    [listed] = http.get("/rule-sets").json()["rule_sets"]
    assert (listed["name"], listed["version"], listed["datasets"]) == ("hygiene", 2, ["emea"])
    assert listed["by"] == "robot" and listed["reason"] == "domains matter more"
    rules = http.get("/datasets/emea/rules").json()
    assert [s["version"] for s in rules["rule_sets"]] == [2]
    latest = PolicyVersion.objects.filter(dataset__name="emea").order_by("-number").first()
    assert latest.reason == "workspace rule set hygiene version 2: domains matter more"
    assert not PolicyVersion.objects.filter(dataset__name="amer").exists()

    # nothing changed: no new version of the set, nor of the dataset's policy
    versions = PolicyVersion.objects.count()
    same = http.post("/rule-sets/hygiene", json={"file": NO_DOMAIN, "reason": "again"})
    assert (same.status_code, same.json()["version"], same.json()["datasets"]) == (200, 2, [])
    used_again = http.post("/datasets/emea/rule-sets/hygiene")
    assert (used_again.status_code, used_again.json()["number"]) == (200, latest.number)
    assert PolicyVersion.objects.count() == versions

    left = http.delete("/datasets/emea/rule-sets/hygiene")
    assert (left.status_code, left.json()["rule_sets"]) == (200, [])
    again = http.delete("/datasets/emea/rule-sets/hygiene")
    assert again.status_code == 400
    assert again.json()["problems"] == ["dataset emea does not use rule set 'hygiene'"]


def test_a_refused_set_or_clash_stores_nothing(http, datasets):
    # emea has its own rule of the id the set would bring
    own = http.post("/datasets/emea/rules", json={"rules": [UNOWNED], "reason": "ours"})
    assert own.status_code == 201, own.text
    assert http.post("/rule-sets/hygiene", json={"file": NO_DOMAIN, "reason": "v1"}).is_success
    assert http.post("/datasets/emea/rule-sets/hygiene").status_code == 201
    versions = PolicyVersion.objects.count()

    clash = http.post("/rule-sets/hygiene", json={"rules": [UNOWNED], "reason": "v2"})
    assert clash.status_code == 400
    assert "dataset emea" in clash.json()["problems"][0]
    bad = http.post(
        "/rule-sets/hygiene",
        json={"rules": [{**UNOWNED, "when": "getenv('X') = 1"}], "reason": "v2"},
    )
    assert bad.status_code == 400
    assert bad.json()["problems"] == [
        "rule open_deal_unowned: when: line 1, column 1: function getenv() is not "
        "allowed (docs/rules.md lists those that are)"
    ]
    unreasoned = http.post("/rule-sets/hygiene", json={"file": NO_DOMAIN})
    assert unreasoned.json()["problems"] == ["a reason is required to change a rule set"]
    for reason, problem in (
        (r"a\udfffb", "the reason holds a NUL byte or a lone surrogate"),
        (r"a\u0000b", "the reason holds a NUL byte or a lone surrogate"),
        ("x" * 2001, "the reason is 2,001 characters; at most 2,000"),
    ):  # a new set, which no dataset uses yet: its own reason is checked
        body = f'{{"file": {json.dumps(NO_DOMAIN)}, "reason": "{reason}"}}'  # JSON escapes
        refused = http.post("/rule-sets/fresh", content=body.encode(), headers=JSON)
        assert (refused.status_code, refused.json()["problems"]) == (400, [problem])
    assert http.post("/rule-sets/Not A Slug", json={"file": NO_DOMAIN, "reason": "x"}).json()[
        "problems"
    ] == ["rule set name 'Not A Slug' must be a slug (a-z, 0-9, _)"]
    assert list(RuleSet.objects.values_list("number", flat=True)) == [1]
    assert PolicyVersion.objects.count() == versions

    unknown = http.post("/datasets/amer/rule-sets/nope")
    assert unknown.json()["problems"] == ["the workspace has no rule set 'nope'"]
    assert http.post("/datasets/nowhere/rule-sets/hygiene").status_code == 404


def test_a_read_token_lists_but_cannot_change(api_url, read_token, datasets):
    with httpx.Client(base_url=api_url, headers=bearer(read_token)) as reader:
        assert reader.get("/rule-sets").json() == {"rule_sets": []}
        denied = reader.post("/rule-sets/hygiene", json={"file": NO_DOMAIN, "reason": "x"})
        assert denied.status_code == 403
        assert reader.post("/datasets/emea/rule-sets/hygiene").status_code == 403
    assert not RuleSet.objects.exists()
