"""Hardening: CSP and cookie flags, login throttling, password reset only with mail,
the default SECRET_KEY refused by the web server, `check --deploy` clean."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from django.urls import NoReverseMatch, reverse

from tests.services import ROOT

pytestmark = pytest.mark.django_db

PASSWORD = "right-horse-battery-1"


def test_pages_carry_a_csp_that_allows_only_our_own_scripts(client):
    response = client.get(reverse("login"))

    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "unsafe-eval" not in policy
    assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy
    assert response["X-Frame-Options"] == "DENY"


def test_login_is_locked_after_repeated_wrong_passwords(client, django_user_model, settings):
    django_user_model.objects.create_user("staff", password=PASSWORD, is_staff=True)
    url = reverse("login")

    codes = [
        client.post(url, {"username": "staff", "password": f"guess-{n}"}).status_code
        for n in range(settings.AXES_FAILURE_LIMIT)
    ]
    locked = client.post(url, {"username": "staff", "password": PASSWORD})

    assert codes[:-1] == [200] * (settings.AXES_FAILURE_LIMIT - 1)  # the form, again
    assert locked.status_code == 429  # even the right password, until the cool-off
    assert "_auth_user_id" not in client.session


def test_the_admin_login_is_throttled_too(client, django_user_model, settings):
    django_user_model.objects.create_user("staff", password=PASSWORD, is_staff=True)
    url = reverse("admin:login")
    for n in range(settings.AXES_FAILURE_LIMIT):
        client.post(url, {"username": "staff", "password": f"guess-{n}"})

    assert client.post(url, {"username": "staff", "password": PASSWORD}).status_code == 429


def test_a_right_password_signs_in_below_the_limit(client, django_user_model):
    django_user_model.objects.create_user("staff", password=PASSWORD)
    client.post(reverse("login"), {"username": "staff", "password": "wrong"})

    response = client.post(reverse("login"), {"username": "staff", "password": PASSWORD})

    assert response.status_code == 302 and "_auth_user_id" in client.session


OFFICE, HOME = "203.0.113.20", "198.51.100.7"


def sign_in(address: str, username: str, password: str) -> int:
    return (
        Client(REMOTE_ADDR=address)
        .post(reverse("login"), {"username": username, "password": password})
        .status_code
    )


def test_password_spraying_from_one_address_is_throttled_after_its_limit(
    django_user_model, settings
):
    """One guess at each of 30 usernames: each username stays under its own limit, so
    only the address's count stops it, at AXES_ADDRESS_FAILURE_LIMIT, for every
    username at that address (the right password too) and for no other address."""
    django_user_model.objects.create_user("user07", password=PASSWORD)
    limit = settings.AXES_ADDRESS_FAILURE_LIMIT
    assert settings.AXES_FAILURE_LIMIT < limit < 30
    codes = [sign_in(OFFICE, f"user{n:02}", "Summer2026!") for n in range(30)]
    assert codes[: limit - 1] == [200] * (limit - 1)  # the form, again
    assert codes[limit:] == [429] * (30 - limit)
    assert sign_in(OFFICE, "user07", PASSWORD) == 429
    assert sign_in(HOME, "user07", PASSWORD) == 302


def test_a_mistyped_password_locks_out_no_colleague_behind_the_same_address(
    django_user_model, settings
):
    django_user_model.objects.create_user("alice", password=PASSWORD)
    django_user_model.objects.create_user("bob", password=PASSWORD)
    for n in range(settings.AXES_FAILURE_LIMIT):  # alice locks herself out
        sign_in(OFFICE, "alice", f"guess-{n}")
    assert sign_in(OFFICE, "alice", PASSWORD) == 429
    assert sign_in(OFFICE, "bob", "pasword-typo") == 200
    assert sign_in(OFFICE, "bob", PASSWORD) == 302


def test_a_right_password_does_not_wipe_the_addresss_count_of_other_usernames(
    django_user_model, settings
):
    """A sprayer holding one valid account cannot sign in with it to start over."""
    django_user_model.objects.create_user("insider", password=PASSWORD)
    limit = settings.AXES_ADDRESS_FAILURE_LIMIT
    for n in range(limit - 1):
        sign_in(OFFICE, f"user{n:02}", "Summer2026!")
    assert sign_in(OFFICE, "insider", PASSWORD) == 302
    assert sign_in(OFFICE, "user99", "Summer2026!") == 429


def test_password_reset_is_off_without_mail(client):
    with pytest.raises(NoReverseMatch):
        reverse("password_reset")
    assert client.get("/accounts/password_reset/").status_code == 404


def test_password_reset_is_on_with_mail(settings):
    settings.PASSWORD_RESET_ENABLED = True
    import importlib

    import revreview.urls

    try:
        urls = importlib.reload(revreview.urls)
        names = {p.name for p in urls.auth_urls}
        assert {"password_reset", "password_reset_confirm"} <= names
    finally:
        settings.PASSWORD_RESET_ENABLED = False
        importlib.reload(revreview.urls)


def test_the_web_server_refuses_the_default_secret_key(settings):
    from revreview.wsgi import require_secret_key

    settings.DEBUG = False
    settings.SECRET_KEY = settings.DEFAULT_SECRET_KEYS[0]
    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY is the built-in default"):
        require_secret_key()
    settings.DEBUG = True
    require_secret_key()  # local development may


@pytest.mark.parametrize("key", ["x", "k" * 200, "abcd" * 20, "short-but-random-Q7z!"])
def test_the_web_server_refuses_a_weak_secret_key(settings, key):
    from revreview.wsgi import require_secret_key

    settings.DEBUG = False
    settings.SECRET_KEY = key
    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY is weak"):
        require_secret_key()
    settings.SECRET_KEY = "a-production-secret-" + "x1y2z3" * 10
    require_secret_key()


def production_env(**overrides: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "SECURE_", "SESSION_", "CSRF_")) and key != "DEBUG"
    }
    env.update(
        DJANGO_SETTINGS_MODULE="revreview.settings",
        DEBUG="false",
        SECRET_KEY="a-production-secret-" + "x1y2z3" * 10,
        ALLOWED_HOSTS="revreview.example.com",
        CSRF_TRUSTED_ORIGINS="https://revreview.example.com",
        SITE_URL="https://revreview.example.com",  # else revreview.W002 (revreview/checks.py)
        **overrides,
    )
    return env


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_passes_with_production_settings(tmp_path):
    result = manage(
        "check", "--deploy", "--fail-level", "WARNING", env=production_env(DATA_DIR=str(tmp_path))
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_fails_with_the_default_secret_key(tmp_path):
    env = production_env(DATA_DIR=str(tmp_path))
    del env["SECRET_KEY"]

    result = manage("check", "--deploy", "--fail-level", "WARNING", env=env)

    assert result.returncode != 0
    assert "security.W009" in result.stderr + result.stdout


def test_runserver_refuses_to_start_with_the_default_secret_key(tmp_path):
    env = production_env(DATA_DIR=str(tmp_path))
    del env["SECRET_KEY"]
    code = "import revreview.wsgi"

    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )

    assert result.returncode != 0 and "SECRET_KEY is the built-in default" in result.stderr
