"""Standing problems over the API (docs/history.md): the run, the runs list and the
dataset carry them, in the shapes the OpenAPI schema documents."""

from __future__ import annotations

import pytest

from tests.services import ROOT

pytestmark = [pytest.mark.django_db(transaction=True)]

FULL = (ROOT / "samples" / "full.json").read_bytes()
JSON = {"Content-Type": "application/json"}


def sync(http) -> dict:
    response = http.post("/batches", content=FULL, headers=JSON, params={"dataset": "acme"})
    assert response.status_code == 202, response.text
    return http.get(response.json()["urls"]["api"]).json()


def test_the_run_the_runs_list_and_the_dataset_carry_standing(http):
    first = sync(http)
    second = sync(http)  # the same export again: nothing new, everything still open
    assert (first["verdict"], second["verdict"]) == ("request_changes", "approve")
    standing = second["standing"]
    assert standing["state"] == "open_critical"
    assert standing["critical"] == first["standing"]["critical"] >= 1
    assert standing["since_run"] == first["run"]["id"]
    assert second["batch"]["external_id"] == "full"
    assert isinstance(second["batch"]["id"], int)

    listed = http.get("/runs", params={"dataset": "acme"}).json()["items"]
    assert {item["id"]: item["standing"]["state"] for item in listed} == {
        first["run"]["id"]: "open_critical",
        second["run"]["id"]: "open_critical",
    }
    dataset = http.get("/datasets/acme").json()
    assert dataset["runs"][0]["standing"] == standing
