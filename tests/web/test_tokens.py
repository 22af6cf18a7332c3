"""API tokens made and revoked by their user (settings page), by staff (admin) and by
scripts (manage.py api_token)."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from reviews.apiauth.models import ApiToken
from reviews.apiauth.tokens import active_token, cached_token, digest

pytestmark = pytest.mark.django_db


def test_a_user_creates_a_token_and_sees_it_once(member_client, member):
    response = member_client.post(
        reverse("reviews:tokens"), {"name": "nightly export", "scopes": ["upload"]}
    )
    assert response.status_code == 200
    secret = re.search(rb'<code id="token-secret">(rr_[\w-]+)</code>', response.content)[1].decode()
    token = ApiToken.objects.get(user=member)
    assert (token.name, token.scopes, token.digest) == (
        "nightly export",
        ["upload"],
        digest(secret),
    )
    assert active_token(secret) == token

    page = member_client.get(reverse("reviews:tokens"))
    assert secret.encode() not in page.content  # shown once
    assert b"nightly export" in page.content


def test_a_duplicate_name_is_refused_on_the_form(member_client, member):
    member_client.post(reverse("reviews:tokens"), {"name": "ci", "scopes": ["read"]})
    response = member_client.post(reverse("reviews:tokens"), {"name": "ci", "scopes": ["read"]})
    assert b"already has an active token" in response.content
    assert ApiToken.objects.filter(user=member).count() == 1


def test_a_user_revokes_their_token_but_not_anothers(member_client, member, django_user_model):
    member_client.post(reverse("reviews:tokens"), {"name": "mine", "scopes": ["read"]})
    mine = ApiToken.objects.get(user=member)
    other = django_user_model.objects.create_user("other", password="other-pass-1")
    theirs = ApiToken.objects.create(user=other, name="theirs", prefix="rr_x", digest="0" * 64)

    assert member_client.post(reverse("reviews:token_revoke", args=[theirs.pk])).status_code == 404
    member_client.post(reverse("reviews:token_revoke", args=[mine.pk]))
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert mine.revoked_at is not None
    assert theirs.revoked_at is None


def test_the_settings_page_needs_a_login(client):
    response = client.get(reverse("reviews:tokens"))
    assert response.status_code == 302
    assert "/login/" in response.url


def test_staff_create_a_token_in_admin_shown_once(admin_client, member):
    response = admin_client.post(
        reverse("admin:api_apitoken_add"),
        {"user": member.pk, "name": "from admin", "scopes": ["read", "upload"]},
        follow=True,
    )
    assert response.status_code == 200
    text = response.content.decode()
    secret = re.search(r"(rr_[\w-]{43})", text)[1]
    token = ApiToken.objects.get(user=member, name="from admin")
    assert active_token(secret) == token
    assert token.scopes == ["read", "upload"]
    # Cached for uploads sent while the database is down; forgotten once revoked.
    assert cached_token(secret).user_id == member.pk

    admin_client.post(
        reverse("admin:api_apitoken_changelist"),
        {"action": "revoke", "_selected_action": [token.pk]},
    )
    assert active_token(secret) is None
    assert cached_token(secret) is None


def test_api_token_command_prints_a_token_and_revokes_it(member):
    out, err = io.StringIO(), io.StringIO()
    call_command("api_token", "member", "--name", "ci", "--scope", "read", stdout=out, stderr=err)
    secret = out.getvalue().strip()
    token = active_token(secret)
    assert token.user == member and token.scopes == ["read"]
    assert secret not in err.getvalue()

    call_command("api_token", "member", "--name", "both", stdout=io.StringIO(), stderr=err)
    assert ApiToken.objects.get(name="both").scopes == ["read", "upload"]

    call_command("api_token", "member", "--revoke", "ci", stderr=io.StringIO())
    assert active_token(secret) is None
    with pytest.raises(CommandError, match="no active token"):
        call_command("api_token", "member", "--revoke", "ci", stderr=io.StringIO())
    with pytest.raises(CommandError, match="no user"):
        call_command("api_token", "nobody", "--name", "x", stdout=io.StringIO())
