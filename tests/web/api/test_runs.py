"""Reading runs and re-running them over a live server (tasks run in-process)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from reviews.models import ReviewRun
from reviews.reports.report import run_report
from tests.services import ROOT
from tests.uploads import DATA

pytestmark = [pytest.mark.django_db(transaction=True)]

JSON = {"Content-Type": "application/json"}


def post_sample(http, path) -> dict:
    response = http.post("/batches", content=path.read_bytes(), headers=JSON)
    assert response.status_code == 202, response.text
    return response.json()


def test_a_run_reads_as_the_spec_json_plus_its_urls(http):
    answer = post_sample(http, DATA / "seed-example.json")
    report = http.get(f"/runs/{answer['run_id']}").json()
    assert report["run"]["status"] == "done"  # eager tasks: done by the time we ask
    assert report["urls"] == answer["urls"]
    # Exactly the dashboard's and the CLI's document (nothing dropped), plus its URLs.
    del report["urls"]
    run = ReviewRun.objects.get(pk=answer["run_id"])
    assert report == json.loads(json.dumps(run_report(run)))


def test_an_unknown_run_is_404(http):
    assert http.get("/runs/999999").status_code == 404
    assert http.get(f"/runs/{2**70}").status_code == 422
    assert http.post("/runs/999999/rerun").status_code == 404


def test_runs_filter_by_verdict_and_time(http):
    clean = post_sample(http, ROOT / "samples" / "clean.json")
    full = post_sample(http, ROOT / "samples" / "full.json")

    def ids(**params) -> list[int]:
        response = http.get("/runs", params=params)
        assert response.status_code == 200, response.text
        return [item["id"] for item in response.json()["items"]]

    assert ids() == [full["run_id"], clean["run_id"]]
    assert ids(verdict="approve") == [clean["run_id"]]
    assert ids(verdict="request_changes") == [full["run_id"]]
    future = (timezone.now() + timedelta(hours=1)).isoformat()
    assert ids(since=future) == []
    assert ids(limit=1) == [full["run_id"]]
    assert http.get("/runs", params={"limit": 1}).json()["count"] == 2
    assert http.get("/runs", params={"verdict": "maybe"}).status_code == 422
    # `since` is a date-time or a date, as the schema says: not a Unix time (was 1970).
    assert http.get("/runs", params={"since": "0.5"}).status_code == 422
    assert ids(since="2000-01-01") == [full["run_id"], clean["run_id"]]


def test_a_rerun_is_a_fresh_review_of_the_same_batch(http):
    answer = post_sample(http, DATA / "seed-example.json")
    response = http.post(f"/runs/{answer['run_id']}/rerun")
    assert response.status_code == 202
    again = response.json()
    assert again["run_id"] != answer["run_id"]
    assert again["batch_id"] == answer["batch_id"]
    assert again["mode"] == "fresh"  # the cache is skipped
    assert ReviewRun.objects.get(pk=again["run_id"]).status == "done"
