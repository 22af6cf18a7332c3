"""`make run` stops on one Ctrl-C: the terminal sends SIGINT to the foreground process
group once, and every process `make run` started (the supervisor, the web server, the
worker and its children) must be gone soon after, without a flood of log lines, and
without the warnings a newcomer took for errors (tests/deploy/test_foreground.py covers
the exit code on a terminal)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
import urllib.request

import psutil
import pytest

from tests.services import ROOT

pytestmark = pytest.mark.integration

STARTUP_SECONDS = 240
STOP_SECONDS = 10
MAX_LINES_AFTER_SIGNAL = 50


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serving(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 (a local URL)
            return response.status == 200
    except OSError:
        return False


def test_one_sigint_stops_every_process_of_make_run(tmp_path):
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "CELERY_TASK_ALWAYS_EAGER", "MAKEFLAGS")
    }
    env |= {"DATA_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "revreview.settings"}
    port = free_port()
    # Its own session: the test's SIGINT reaches make's process group as a terminal's would.
    make = subprocess.Popen(
        ["make", "run", f"PORT={port}"],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[tuple[float, str]] = []

    def read() -> None:
        for line in make.stdout:
            lines.append((time.monotonic(), line))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    tree: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        url = f"http://127.0.0.1:{port}/accounts/login/"
        while not (any(" ready." in line for _, line in lines) and serving(url)):
            assert make.poll() is None, "".join(line for _, line in lines)[-3000:]
            assert time.monotonic() < deadline, "".join(line for _, line in lines)[-3000:]
            time.sleep(0.5)

        tree = [psutil.Process(make.pid), *psutil.Process(make.pid).children(recursive=True)]
        names = {p.name() for p in tree}
        assert {"make", "celery"} <= names and any(n.startswith("python") for n in names), names

        signalled_at = time.monotonic()
        os.killpg(make.pid, signal.SIGINT)
        _, alive = psutil.wait_procs(tree, timeout=STOP_SECONDS)
        stopped_in = time.monotonic() - signalled_at
        reader.join(timeout=5)
    finally:  # only if the test failed is anything left to kill
        for process in tree or [psutil.Process(make.pid)]:
            if process.is_running():
                process.kill()

    after = [line for at, line in lines if at >= signalled_at]
    everything = "".join(line for _, line in lines)
    # Quiet logs: kombu is given a broker host, Celery's page about root is one line,
    # and the stop is not reported as make's failure.
    assert "No hostname was supplied" not in everything
    assert "superuser privileges" not in everything
    if os.geteuid() == 0:  # explained once instead (revreview/celery.py)
        assert everything.count("The worker runs as root") == 1, everything[-3000:]
    assert "Error 130" not in everything
    assert f"SITE_URL=http://127.0.0.1:{port}" in everything  # the alert links follow PORT
    assert not alive, [(p.pid, p.name()) for p in alive]
    assert stopped_in < STOP_SECONDS
    assert len(after) < MAX_LINES_AFTER_SIGNAL, "".join(after)
    assert not any("Traceback" in line or "RecursionError" in line for line in after), after
    assert not any("Segmentation fault" in line for line in after), after
