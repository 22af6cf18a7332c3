"""A dataset's own rules over the API (docs/api.md): preview, add, list, remove; a refused
file answers 400 with every problem and stores nothing; the next run says what each rule
did."""

from __future__ import annotations

import pytest

from reviews.models import PolicyVersion
from tests.engine.team_rules.exports import AS_OF, export_files
from tests.web.api.conftest import poll_until_finished

pytestmark = [pytest.mark.django_db(transaction=True)]

RULE = {
    "id": "contract_sent_no_next_step",
    "object": "deals",
    "when": "\"Deal Stage\" = 'Contract Sent' AND coalesce(trim(\"Next Step\"), '') = ''",
    "severity": "critical",
    "title": "Contract sent with no next step",
    "fix": "Write the next step",
}


def upload(http) -> dict:
    files = [("files", (f.name, f.data, "text/csv")) for f in export_files()]
    response = http.post(
        "/batches", files=files, params={"dataset": "acme", "as_of": AS_OF.isoformat()}
    )
    assert response.status_code == 202, response.text
    return poll_until_finished(http, response.json()["urls"]["api"])


def test_rules_previewed_added_run_listed_and_removed(http):
    upload(http)
    preview = http.post("/datasets/acme/rules/preview", json={"rules": [RULE]})
    assert preview.status_code == 200, preview.text
    [rule] = preview.json()["rules"]
    assert (rule["count"], rule["record_ids"]) == (1, ["5001"])
    assert not PolicyVersion.objects.exists()

    refused = http.post(
        "/datasets/acme/rules",
        json={"file": "rules:\n  - {id: r1, object: deals, when: \"getenv('X') = 1\"}"},
    )
    assert refused.status_code == 400
    assert refused.json()["problems"] == [
        "rule r1: severity is missing",
        "rule r1: title is missing",
        "rule r1: fix is missing",
    ]
    refused = http.post(
        "/datasets/acme/rules",
        json={"rules": [{**RULE, "when": "getenv('X') = 1"}], "reason": "x"},
    )
    assert refused.json()["problems"] == [
        "rule contract_sent_no_next_step: when: line 1, column 1: function getenv() is not "
        "allowed (docs/rules.md lists those that are)"
    ]
    assert not PolicyVersion.objects.exists()
    # A rule that can build a huge text is refused before it runs (on this small
    # export two levels would be harmless: the preview must not run it at all).
    growing = "length(replace(replace(name, 'a', 'aaaaaaaaaa'), 'a', 'aaaaaaaaaa')) > 0"
    refused = http.post("/datasets/acme/rules/preview", json={"rules": [{**RULE, "when": growing}]})
    assert refused.status_code == 400
    assert refused.json()["problems"] == [
        "rule contract_sent_no_next_step: when: line 1, column 8: replace() builds a text up "
        "to 100 times as long as the longest value it starts from; a rule may build at most "
        "16 times (docs/rules.md)"
    ]

    added = http.post("/datasets/acme/rules", json={"rules": [RULE], "reason": "our check"})
    assert added.status_code == 201, added.text
    assert added.json() == {
        "number": 1,
        "reason": "our check",
        "rules": [RULE],
        "changes": {RULE["id"]: "added"},
    }
    again = http.post("/datasets/acme/rules", json={"rules": [RULE], "reason": "again"})
    assert (again.status_code, again.json()["number"]) == (200, 1)  # nothing changed
    assert again.json()["changes"] == {RULE["id"]: "unchanged"}
    listed = http.get("/datasets/acme/rules").json()
    assert listed["rules"] == [RULE] and listed["version"] == 1 and listed["rule_sets"] == []
    assert listed["history"][0]["diff"][0]["what"] == "team rule contract_sent_no_next_step"
    assert listed["history"][0]["by"] == "robot"

    report = upload(http)
    assert report["run"]["mode"] == "fresh"  # the cache key follows the policy version
    assert report["verdict"] == "request_changes"
    assert report["run"]["team_rules"] == [
        {
            "id": "contract_sent_no_next_step",
            "object": "deals",
            "severity": "critical",
            "status": "ran",
            "count": 1,
            "why": "",
        }
    ]
    [finding] = [f for f in report["findings"] if f["category"] == "team_rules"]
    assert (finding["kind"], finding["severity"], finding["record_ids"]) == (
        "contract_sent_no_next_step",
        "critical",
        ["5001"],
    )

    removed = http.delete("/datasets/acme/rules/contract_sent_no_next_step")
    assert removed.status_code == 200 and removed.json()["rules"] == []
    assert http.delete("/datasets/acme/rules/contract_sent_no_next_step").status_code == 400
    assert http.get("/datasets/nope/rules").status_code == 404
