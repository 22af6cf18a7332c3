"""Tokens over a live server: who gets in, with which scope, and where a token is no
login at all."""

from __future__ import annotations

import httpx
import pytest

from reviews.apiauth.models import ApiToken
from reviews.apiauth.tokens import create_token, revoke_token
from reviews.models import Batch
from tests.uploads import DATA
from tests.web.api.conftest import bearer

pytestmark = [pytest.mark.django_db(transaction=True)]

SEED = (DATA / "seed-example.json").read_bytes()
JSON = {"Content-Type": "application/json"}


def upload(api_url: str, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{api_url}/batches", content=SEED, headers={**JSON, **headers})


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer rr_not-a-token"},
        {"Authorization": "Bearer rr_"},
        {"Authorization": "Basic cm9ib3Q6cm9ib3QtcGFzcy0xMjM="},  # the user's password
    ],
)
def test_without_a_valid_token_the_api_answers_401(api_url, api_user, headers):
    for response in (upload(api_url, headers), httpx.get(f"{api_url}/runs", headers=headers)):
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
        assert "token" in response.json()["detail"]
    assert Batch.objects.count() == 0


def test_a_revoked_token_is_401(api_url, api_user, token):
    assert httpx.get(f"{api_url}/runs", headers=bearer(token)).status_code == 200
    assert revoke_token(api_user, "nightly export")
    assert httpx.get(f"{api_url}/runs", headers=bearer(token)).status_code == 401
    assert upload(api_url, bearer(token)).status_code == 401


def test_the_token_of_a_deactivated_user_is_401(api_url, api_user, token):
    api_user.is_active = False
    api_user.save()
    assert httpx.get(f"{api_url}/runs", headers=bearer(token)).status_code == 401


def test_a_read_only_token_cannot_upload(api_url, read_token):
    response = upload(api_url, bearer(read_token))
    assert response.status_code == 403
    assert "upload" in response.json()["detail"]
    assert Batch.objects.count() == 0
    assert httpx.get(f"{api_url}/runs", headers=bearer(read_token)).status_code == 200


def test_an_upload_only_token_cannot_read(api_url, api_user):
    secret = create_token(api_user, "push only", ["upload"]).secret
    assert httpx.get(f"{api_url}/runs", headers=bearer(secret)).status_code == 403
    assert upload(api_url, bearer(secret)).status_code == 202


def test_a_token_is_stored_hashed_and_marked_used(api_url, api_user, token):
    stored = ApiToken.objects.get(user=api_user)
    assert token not in (stored.digest, stored.prefix)
    assert token.startswith(stored.prefix)
    assert stored.last_used_at is None
    httpx.get(f"{api_url}/runs", headers=bearer(token))
    stored.refresh_from_db()
    assert stored.last_used_at is not None


def test_a_staff_users_token_cannot_reach_admin_or_the_dashboard(
    live_server, api_url, django_user_model
):
    boss = django_user_model.objects.create_user(
        "boss", password="boss-pass-123", is_staff=True, is_superuser=True
    )
    secret = create_token(boss, "boss script").secret
    with httpx.Client(base_url=live_server.url, headers=bearer(secret)) as client:
        assert client.get("/api/v1/runs").status_code == 200
        for path in ("/admin/", "/admin/reviews/batch/", "/", "/runs/"):
            response = client.get(path)
            assert response.status_code == 302, path
            assert "/login/" in response.headers["Location"], path
