"""Datasets over the API: uploads into a dataset, its history, dismiss and undo, and an
alert for the dataset's request_changes run."""

from __future__ import annotations

import json
import re

import pytest

from alerts import signing
from alerts.models import WebhookSubscription
from reviews.models import Batch, Dataset, Dismissal
from tests.alerts.receiver import Receiver
from tests.services import ROOT

pytestmark = [pytest.mark.django_db(transaction=True)]

FULL = (ROOT / "samples" / "full.json").read_bytes()
JSON = {"Content-Type": "application/json"}


def sync(http, dataset: str = "acme-hubspot") -> dict:
    response = http.post("/batches", content=FULL, headers=JSON, params={"dataset": dataset})
    assert response.status_code == 202, response.text
    return http.get(response.json()["urls"]["api"]).json()


def test_an_upload_joins_its_dataset_and_the_runs_list_filters_by_it(http):
    report = sync(http)
    assert report["run"]["status"] == "done"
    other = http.post("/batches", content=FULL, headers=JSON)
    assert other.status_code == 202

    listed = http.get("/runs", params={"dataset": "acme-hubspot"}).json()
    assert [item["id"] for item in listed["items"]] == [report["run"]["id"]]
    assert listed["items"][0]["dataset"] == "acme-hubspot"
    assert http.get("/runs", params={"dataset": "nope"}).json()["count"] == 0
    # Names are kept stripped, so the filter strips too; a blank one is no filter.
    assert http.get("/runs", params={"dataset": " acme-hubspot "}).json()["count"] == 1
    assert http.get("/runs", params={"dataset": "  "}).json()["count"] == 2


def test_a_bad_dataset_name_rejects_the_batch_naming_the_field(http):
    response = http.post("/batches", content=FULL, headers=JSON, params={"dataset": "a\x01b"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["location"] == "dataset"


@pytest.mark.parametrize(
    ("query", "shown"),
    [
        ("dataset=%ED%A0%80", '"\\udced\\udca0\\udc80"'),  # not UTF-8: never U+FFFD
        ("dataset=%00", '"\\u0000"'),
        ("dataset=a%01b", '"a\\u0001b"'),
    ],
)
def test_a_dataset_parameter_that_cannot_be_a_name_rejects_the_batch_and_keeps_it(
    http, query, shown
):
    # Refused rather than altered (docs/input.md): 400 with the batch kept, as the
    # batch's own "dataset" key is; with an Idempotency-Key too (it hashes the name).
    key = {"Idempotency-Key": f"bad-{query}"}
    response = http.post(f"/batches?{query}", content=FULL, headers={**JSON, **key})

    assert response.status_code == 400, response.text
    (error,) = response.json()["errors"]
    assert error == {
        "location": "dataset",
        "message": f"name holds a control character or a lone surrogate: {shown}",
    }
    batch = Batch.objects.get(pk=response.json()["batch_id"])
    assert (batch.status, batch.dataset) == (Batch.Status.REJECTED, None)
    assert not Dataset.objects.exists()


def test_a_replacement_character_sent_as_utf_8_is_part_of_the_name(http):
    response = http.post("/batches?dataset=a%EF%BF%BDb", content=FULL, headers=JSON)

    assert response.status_code == 202, response.text
    assert Dataset.objects.get().name == "a\ufffdb"


def test_dismiss_then_undo_a_finding_of_a_dataset(http):
    first = sync(http)
    finding = next(f for f in first["findings"] if f["severity"] == "critical")

    made = http.post(
        "/datasets/acme-hubspot/dismissals",
        json={"fingerprint": finding["fingerprint"], "reason": "two subsidiaries, not a duplicate"},
    )
    assert made.status_code == 201, made.text
    assert made.json()["dismissed_by"] == "robot"
    assert made.json()["via"] == "api"

    second = sync(http)
    assert finding["fingerprint"] in {s["fingerprint"] for s in second["suppressed"]}
    assert finding["fingerprint"] not in {f["fingerprint"] for f in second["findings"]}

    dataset = http.get("/datasets/acme-hubspot").json()
    assert dataset["batches"] == 2
    assert [run["id"] for run in dataset["runs"]][:2] == [second["run"]["id"], first["run"]["id"]]
    assert dataset["runs"][0]["suppressed"] >= 1
    assert dataset["runs"][0]["open"] >= 1
    assert [(d["fingerprint"], d["via"]) for d in dataset["dismissals"]] == [
        (finding["fingerprint"], "api")
    ]

    undone = http.delete(f"/datasets/acme-hubspot/dismissals/{finding['fingerprint']}")
    assert undone.status_code == 200
    assert undone.json()["undone_by"] == "robot"
    assert http.get("/datasets/acme-hubspot").json()["dismissals"] == []
    again = http.delete(f"/datasets/acme-hubspot/dismissals/{finding['fingerprint']}")
    assert again.status_code == 400


def test_dismissal_errors_are_400_or_404(http):
    sync(http)
    bad = http.post(
        "/datasets/acme-hubspot/dismissals", json={"fingerprint": "xyz", "reason": "because"}
    )
    assert bad.status_code == 400
    assert "fingerprint" in bad.json()["detail"]
    no_reason = http.post(
        "/datasets/acme-hubspot/dismissals", json={"fingerprint": "0" * 16, "reason": " "}
    )
    assert no_reason.status_code == 400
    assert http.get("/datasets/unknown").status_code == 404
    missing = http.post(
        "/datasets/unknown/dismissals", json={"fingerprint": "0" * 16, "reason": "x"}
    )
    assert missing.status_code == 404


def test_a_request_changes_sync_uploaded_by_api_alerts_its_subscribers(http, settings):
    settings.WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]  # the receiver: an internal one, listed
    dataset = Dataset.objects.create(name="acme-hubspot")
    with Receiver() as receiver:
        WebhookSubscription.objects.create(dataset=dataset, url=receiver.url, secret="s3cret")
        report = sync(http)
        (request,) = receiver.wait_for(1)
    assert report["verdict"] == "request_changes"
    assert signing.verify("s3cret", request.headers[signing.HEADER], request.body)
    assert json.loads(request.body)["run"]["id"] == report["run"]["id"]


def test_the_api_docs_name_every_place_a_dismissal_is_made():
    """docs/api.md lists a dismissal's `via` values: Dismissal.Via's, no more, no fewer."""
    api = (ROOT / "docs" / "api.md").read_text()
    (line,) = [line for line in api.splitlines() if "/dismissals` | upload" in line]
    listed = re.search(r"`via` \(([^)]*)\)", line).group(1)
    assert re.findall(r"`([a-z]+)`", listed) == list(Dismissal.Via.values)
