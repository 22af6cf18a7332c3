"""Idempotency keys and the rate limit, over a live server."""

from __future__ import annotations

import json

import pytest

from reviews.models import Batch, ReviewRun
from tests.uploads import DATA

pytestmark = [pytest.mark.django_db(transaction=True)]

SEED = (DATA / "seed-example.json").read_bytes()
JSON = {"Content-Type": "application/json"}


def test_a_retried_upload_with_the_same_key_returns_the_first_run(http):
    headers = {**JSON, "Idempotency-Key": "nightly-2026-11-22"}
    first = http.post("/batches", content=SEED, headers=headers)
    again = http.post("/batches", content=SEED, headers=headers)

    assert first.status_code == again.status_code == 202
    assert again.json()["run_id"] == first.json()["run_id"]
    assert again.json()["batch_id"] == first.json()["batch_id"]
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert Batch.objects.count() == 1
    assert ReviewRun.objects.count() == 1

    # Without a key (or with another one) the same file is a new upload.
    assert http.post("/batches", content=SEED, headers=JSON).status_code == 202
    assert Batch.objects.count() == 2


def test_a_key_reused_for_another_upload_is_refused(http):
    headers = {**JSON, "Idempotency-Key": "k-1"}
    assert http.post("/batches", content=SEED, headers=headers).status_code == 202
    other = json.dumps({"companies": [], "contacts": [], "deals": []}).encode()
    response = http.post("/batches", content=other, headers=headers)
    assert response.status_code == 422
    assert "Idempotency-Key" in response.json()["detail"]
    assert Batch.objects.count() == 1


def test_a_rejected_upload_is_replayed_as_rejected(http):
    headers = {**JSON, "Idempotency-Key": "broken-1"}
    first = http.post("/batches", content=b"{not json", headers=headers)
    again = http.post("/batches", content=b"{not json", headers=headers)
    assert first.status_code == again.status_code == 400
    assert again.json() == first.json()
    assert Batch.objects.count() == 1


def test_over_the_rate_limit_the_api_answers_429_with_retry_after(http, settings):
    settings.RATE_LIMIT_PER_HOUR = 1
    modes = []
    for _ in range(2):  # within 2x the limit: served (the second from the cache)
        response = http.post("/batches", content=SEED, headers=JSON)
        assert response.status_code == 202
        modes.append(response.json()["mode"])
    assert modes == ["fresh", "cached"]

    refused = http.post("/batches", content=SEED, headers=JSON)
    assert refused.status_code == 429, refused.text
    assert 1 <= int(refused.headers["Retry-After"]) <= 3600
    assert "rate limit" in refused.json()["detail"]
    assert Batch.objects.count() == 3  # the refused upload is kept
    assert ReviewRun.objects.count() == 2

    rerun = http.post(f"/runs/{ReviewRun.objects.earliest('id').pk}/rerun")
    assert rerun.status_code == 429
    assert "Retry-After" in rerun.headers


def test_a_refused_upload_frees_its_idempotency_key(http, settings):
    settings.RATE_LIMIT_PER_HOUR = 1
    for _ in range(2):
        http.post("/batches", content=SEED, headers=JSON)
    headers = {**JSON, "Idempotency-Key": "retry-me"}
    assert http.post("/batches", content=SEED, headers=headers).status_code == 429
    settings.RATE_LIMIT_PER_HOUR = 0  # unlimited: the retry goes through
    assert http.post("/batches", content=SEED, headers=headers).status_code == 202
