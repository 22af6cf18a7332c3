"""The embedded mode `make run` uses, end to end: SQLite, kombu's filesystem broker and a
real worker process, with no Postgres or Redis settings at all."""

import json
import os
import subprocess
import sys

import pytest

from tests import services
from tests.services import ROOT

pytestmark = pytest.mark.integration


def test_a_review_goes_through_the_filesystem_broker_to_a_worker(tmp_path):
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "CELERY_TASK_ALWAYS_EAGER")
    }
    env |= {"DJANGO_SETTINGS_MODULE": "revreview.settings", "DATA_DIR": str(tmp_path)}

    def manage(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    assert manage("migrate", "--noinput").returncode == 0
    with services.celery_worker(env) as worker:
        review = manage(
            "review",
            "tests/data/seed-example.json",
            "--worker",
            "--format",
            "json",
            "--timeout",
            "120",
        )
    assert review.returncode == 0, review.stderr[-2000:] + worker.stdout.read()[-3000:]
    report = json.loads(review.stdout)
    assert (report["run"]["status"], report["verdict"]) == ("done", "approve_with_comments")
    assert {f["kind"] for f in report["findings"]} >= {"company_same_domain", "contact_same_email"}
    assert (tmp_path / "revreview.sqlite3").exists()
    # The tasks went through the broker's folders (their results are not kept: a run's
    # progress lives in its rows).
    assert (tmp_path / "broker" / "queue").is_dir()
