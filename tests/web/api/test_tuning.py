"""A dataset's review policy and tuning over the API (docs/api.md)."""

from __future__ import annotations

import pytest

from reviews.models import PolicyVersion
from tests.services import ROOT

pytestmark = [pytest.mark.django_db(transaction=True)]

FULL = (ROOT / "samples" / "full.json").read_bytes()
JSON = {"Content-Type": "application/json"}


def test_tuning_restore_and_a_bad_proposal(http):
    response = http.post("/batches", content=FULL, headers=JSON, params={"dataset": "acme"})
    assert response.status_code == 202, response.text
    tuning = http.get("/datasets/acme/tuning")
    assert tuning.status_code == 200, tuning.text
    body = tuning.json()
    assert body["version"] == 0 and body["history"] == [] and body["proposals"] == []
    assert isinstance(body["root_causes"], list)

    bad = http.post("/datasets/acme/policy/apply", json={"proposal": "nope", "reason": "x"})
    assert bad.status_code == 400 and "no proposal" in bad.json()["detail"]
    no_reason = http.post("/datasets/acme/policy/restore", json={"version": 0})
    assert no_reason.status_code == 201  # a restore says why by itself
    assert no_reason.json()["source"] == "restore"
    assert PolicyVersion.objects.get(dataset__name="acme").number == 1
    missing = http.post("/datasets/acme/policy/restore", json={"version": 7, "reason": "x"})
    assert missing.status_code == 400
    assert http.get("/datasets/nope/tuning").status_code == 404
    assert http.get("/datasets/acme/tuning").json()["version"] == 1
