"""Submit to verdict in a real browser, for a 1,000-record upload, in both modes: the full
stack (Postgres, Redis, a worker) and the embedded one (`make run`: SQLite, the
filesystem broker, a worker), each with its own server. The time from the click on
"Upload and review" to the verdict on the page is written to
test-results/latency.json; bench/README.md reports it."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from reviews.samplegen import write_sample
from tests import services
from tests.services import ROOT
from tests.web.test_browser import PASSWORD, browser, log_in  # noqa: F401 (a fixture)
from tests.web.test_browser import page as page  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

RECORDS = 1_000
RESULTS = ROOT / "test-results" / "latency.json"
# A loose bound, so a lost wake-up (a one-second poll or unlock coming back) fails the
# test; the measured time is the number to read, not this.
BOUND_SECONDS = 6.0


@pytest.fixture(scope="module")
def batch_file(tmp_path_factory) -> Path:
    path, _ = write_sample(tmp_path_factory.mktemp("latency") / "thousand.json", RECORDS, seed=3)
    return path


def submit_and_wait(tab: Page, path: Path) -> float:
    """Seconds from the upload click to the verdict shown."""
    tab.goto("/upload/")
    tab.set_input_files("input[name=files]", str(path))
    started = time.perf_counter()
    tab.click("text=Upload and review")
    expect(tab.locator("#verdict[data-verdict]")).to_be_visible(timeout=60_000)
    return time.perf_counter() - started


def record(mode: str, seconds: float) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results[mode] = {"records": RECORDS, "submit_to_verdict_s": round(seconds, 3)}
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(f"{mode}: {RECORDS:,} records, submit -> verdict {seconds:.2f} s")


def test_full_mode_submit_to_verdict(page, worker, batch_file):  # noqa: F811
    log_in(page)
    submit_and_wait(page, batch_file)  # the first upload warms the worker's imports
    seconds = submit_and_wait(page, batch_file)
    record("full", seconds)
    assert seconds < BOUND_SECONDS


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def embedded_server(data_dir: Path) -> Iterator[str]:
    """`make run`'s mode in subprocesses: migrate, the demo login, a server, a worker."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "CELERY_TASK_ALWAYS_EAGER")
    }
    env |= {
        "DJANGO_SETTINGS_MODULE": "revreview.settings",
        "DATA_DIR": str(data_dir),
        "DEMO_PASSWORD": PASSWORD,
        "DEBUG": "true",  # as `make run` sets it: the default SECRET_KEY needs DEBUG
    }
    # As `make run` does: whitenoise serves htmx from the collected static files.
    for command in (["migrate", "--noinput"], ["collectstatic", "--noinput"], ["demo"]):
        subprocess.run(
            [sys.executable, "manage.py", *command], cwd=ROOT, env=env, check=True, timeout=180
        )
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with services.celery_worker(env) as worker:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.2)
            try:
                yield f"http://127.0.0.1:{port}"
            except BaseException:
                worker.terminate()
                print(worker.stdout.read()[-5000:])
                raise
    finally:
        server.terminate()
        server.wait(timeout=20)


def test_embedded_mode_submit_to_verdict(browser, batch_file, tmp_path):  # noqa: F811
    with embedded_server(tmp_path) as url:
        context = browser.new_context(base_url=url)
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.goto("/")
        page.fill("input[name=username]", "demo")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        expect(page).to_have_url(re.compile(r"/$"))
        submit_and_wait(page, batch_file)  # warms the worker
        seconds = submit_and_wait(page, batch_file)
        context.close()
    record("embedded", seconds)
    assert seconds < BOUND_SECONDS
