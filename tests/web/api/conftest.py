"""The API over a live server: real HTTP (httpx), real Postgres and Redis, tokens made
the way a user makes them."""

from __future__ import annotations

import time

import httpx
import pytest

from reviews.apiauth.tokens import create_token

POLL_TIMEOUT_S = 90


@pytest.fixture
def api_user(django_user_model):
    return django_user_model.objects.create_user("robot", password="robot-pass-123")


@pytest.fixture
def api_url(live_server, redis_url) -> str:
    return f"{live_server.url}/api/v1"


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


@pytest.fixture
def token(api_user) -> str:
    return create_token(api_user, "nightly export").secret


@pytest.fixture
def read_token(api_user) -> str:
    return create_token(api_user, "dashboard reader", ["read"]).secret


@pytest.fixture
def http(api_url, token):
    with httpx.Client(base_url=api_url, headers=bearer(token), timeout=60) as client:
        yield client


def poll_until_finished(http: httpx.Client, url: str) -> dict:
    deadline = time.monotonic() + POLL_TIMEOUT_S
    while time.monotonic() < deadline:
        response = http.get(url)
        assert response.status_code == 200, response.text
        report = response.json()
        if report["run"]["status"] in ("done", "failed"):
            return report
        time.sleep(0.3)
    raise AssertionError(f"run at {url} did not finish in {POLL_TIMEOUT_S} s")
