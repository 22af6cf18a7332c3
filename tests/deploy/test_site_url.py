"""SITE_URL (the links in webhook alerts) follows the address `make run` serves on, and
a start-up check warns when it looks wrong for a deployment (revreview/checks.py)."""

from __future__ import annotations

import subprocess

import pytest
from django.core import checks

from tests.services import ROOT


def make_run_command(*args: str, **env: str) -> str:
    """What `make run` would execute (make -n prints it without running it)."""
    result = subprocess.run(
        ["make", "-n", "--no-print-directory", "run", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", **env},
    )
    return result.stdout


def test_make_run_sets_site_url_from_host_and_port():
    assert "SITE_URL=http://127.0.0.1:18801 " in make_run_command("PORT=18801")
    # Listening on every address: reached on loopback from this machine.
    assert "SITE_URL=http://127.0.0.1:9000 " in make_run_command("PORT=9000", "HOST=0.0.0.0")
    assert "SITE_URL=http://10.0.0.5:8000 " in make_run_command("HOST=10.0.0.5")
    # A SITE_URL given wins.
    given = make_run_command("PORT=18801", SITE_URL="https://rr.example.com")
    assert "SITE_URL=https://rr.example.com " in given


def ids(found) -> list[str]:
    return [message.id for message in found if message.id.startswith("revreview.")]


@pytest.mark.parametrize(
    ("debug", "site_url", "expected"),
    [
        (False, "http://127.0.0.1:8000", ["revreview.W002"]),
        (False, "http://localhost:8000", ["revreview.W002"]),
        (False, "http://0.0.0.0:8000", ["revreview.W002"]),
        (False, "http://rr.example.com", ["revreview.W003"]),
        (False, "https://rr.example.com", []),
        (True, "http://127.0.0.1:8000", []),  # make run
        (True, "127.0.0.1:8000", ["revreview.W001"]),  # not a URL
    ],
)
def test_a_start_up_check_warns_of_a_site_url_wrong_for_a_deployment(
    settings, debug, site_url, expected
):
    settings.DEBUG, settings.SITE_URL = debug, site_url
    found = checks.run_checks(tags=[checks.Tags.security], include_deployment_checks=True)
    assert ids(found) == expected
    # A deployment check: not on every management command (the CLI runs with DEBUG off).
    assert ids(checks.run_checks(tags=[checks.Tags.security])) == []
    assert all(m.level == checks.WARNING for m in found if m.id.startswith("revreview."))


def test_the_web_server_logs_a_wrong_site_url_once_at_start(settings, caplog):
    from revreview.wsgi import warn_about_site_url

    settings.DEBUG, settings.SITE_URL = False, "http://127.0.0.1:8000"
    with caplog.at_level("WARNING", logger="revreview"):
        warn_about_site_url()
    assert [r.getMessage() for r in caplog.records if "revreview.W002" in r.getMessage()]
    caplog.clear()
    settings.SITE_URL = "https://rr.example.com"
    warn_about_site_url()
    assert not [r for r in caplog.records if r.name == "revreview"]
