"""gunicorn, started from the repository as deployed (its gunicorn.conf.py read from the
working directory), keeps credentials sent in a query string out of its access log."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import pytest

from revreview.gunicorn_logging import redact
from tests.deploy.test_deploy import free_port
from tests.services import ROOT

SECRET = "rr_live_4f9d2c7e1a"  # noqa: S105 (made up)


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        (f"GET /api/v1/runs?token={SECRET} HTTP/1.1", "GET /api/v1/runs?token=[redacted] HTTP/1.1"),
        (f"a=1&API_KEY={SECRET};b=2", "a=1&API_KEY=[redacted];b=2"),
        ("monkey=1&page=2", "monkey=1&page=2"),
    ],
)
def test_credentials_in_a_query_string_are_redacted(line, kept):
    assert redact(line) == kept


@pytest.mark.integration
def test_gunicorns_access_log_holds_no_query_string_token(tmp_path):
    log = tmp_path / "access.log"
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "revreview.settings",
        "DEBUG": "false",
        "SECRET_KEY": "access-log-test-" + "q7Z2" * 12,
        "DATA_DIR": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "SECURE_SSL_REDIRECT": "false",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "revreview.wsgi", "--workers", "1",
         "--bind", f"127.0.0.1:{port}", "--access-logfile", str(log)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.get(f"http://127.0.0.1:{port}/no-such-page/?token={SECRET}", timeout=2)
                break
            except httpx.HTTPError:
                time.sleep(0.3)
        time.sleep(0.5)  # the access log is written after the answer
    finally:
        server.terminate()
        output = server.communicate(timeout=30)[0]
    written = log.read_text()
    assert "/no-such-page/?token=[redacted]" in written, (written, output[-2000:])
    assert SECRET not in written
