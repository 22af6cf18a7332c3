"""`manage.py review ... | head`: the reader closes the pipe before the report ends. That
is the reader's choice, not an error: the command stops writing without a traceback, and
its exit code still says the verdict. A real process, in the embedded mode (SQLite in a
folder of the test's own), writing into a pipe this test closes after the first bytes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.services import ROOT

pytestmark = pytest.mark.integration

DEALS = 3_000  # each one past its close date: a report far bigger than a pipe's buffer


@pytest.fixture(scope="module")
def manage_env(tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("pipe")
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "CELERY_TASK_ALWAYS_EAGER")
    }
    env |= {"DJANGO_SETTINGS_MODULE": "revreview.settings", "DATA_DIR": str(folder)}
    migrate = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert migrate.returncode == 0, migrate.stderr[-3000:]
    return env


@pytest.fixture(scope="module")
def big_batch(tmp_path_factory):
    deals = [
        {"id": f"dl_{n}", "name": f"Renewal {n}", "amount": 1000 + n,
         "stage": "qualifiedtobuy", "closeDate": "2026-01-15"}
        for n in range(DEALS)
    ]  # fmt: skip
    path = tmp_path_factory.mktemp("batch") / "late-deals.json"
    path.write_text(
        json.dumps(
            {
                "id": "late-deals",
                "exportedAt": "2026-08-01T09:00:00Z",
                "companies": [],
                "contacts": [],
                "deals": deals,
            }
        )  # fmt: skip
    )
    return path


@pytest.mark.parametrize("format_", ["json", "text"])
def test_a_reader_that_closes_early_gets_no_traceback(manage_env, big_batch, tmp_path, format_):
    errors = tmp_path / "stderr"
    with errors.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "review", str(big_batch), "--format", format_],
            cwd=ROOT,
            env=manage_env,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
        first = process.stdout.read(200)  # what `head -c 200` reads, then it leaves
        process.stdout.close()
        code = process.wait(timeout=300)
    printed = errors.read_text()
    assert first, printed[-3000:]
    assert "Traceback" not in printed, printed[-3000:]
    assert "BrokenPipeError" not in printed and "Exception ignored" not in printed, printed
    # Open deals past their close date are warnings: approve_with_comments, exit 0.
    assert code == 0, printed[-3000:]
