"""The embedded mode `make run` uses, end to end: SQLite, kombu's filesystem broker and a
real worker process, with no Postgres or Redis settings at all."""

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing

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
    # The findings table keeps only the indexes its readers use: the record_ids one is
    # Postgres's GIN, and (run, position) serves look-ups by run.
    with closing(sqlite3.connect(tmp_path / "revreview.sqlite3")) as db:
        indexes = {
            name
            for (name,) in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' "
                "AND tbl_name = 'reviews_finding' AND sql IS NOT NULL"
            )
        }
        # The run page's tally (reviews.web.findings_page) reads the index alone.
        plan = db.execute(
            "EXPLAIN QUERY PLAN SELECT category, severity, kind, status, COUNT(id) "
            "FROM reviews_finding WHERE run_id = 1 GROUP BY 1, 2, 3, 4"
        ).fetchall()
    assert "reviews_fin_run_id_57df1a_idx" in indexes  # (run, position)
    assert "reviews_finding_run_id_206c4291" not in indexes  # run alone
    assert "finding_record_ids_gin" not in indexes
    assert "COVERING INDEX finding_run_kind_tally" in str(plan), plan
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


def test_broker_never_hands_out_a_half_written_message(tmp_path):
    """kombu's filesystem transport writes a message file in place, so a consumer
    listing the folder mid-write read an empty message and the worker died; ours
    renames a finished file into place."""
    import threading

    from kombu import Connection

    from revreview.embedded_celery import AtomicFilesystemTransport

    folder = tmp_path / "queue"
    folder.mkdir()
    options = {
        "data_folder_in": str(folder),
        "data_folder_out": str(folder),
        "control_folder": str(tmp_path / "control"),
        "polling_interval": 0.001,
    }
    # Slow to serialise: kombu's transport has an empty file on disk meanwhile.
    payload = {"items": [{"n": n} for n in range(20_000)]}
    count = 30

    def produce() -> None:
        with Connection(transport=AtomicFilesystemTransport, transport_options=options) as conn:
            queue = conn.SimpleQueue("q")
            for i in range(count):
                queue.put({**payload, "i": i})

    producer = threading.Thread(target=produce)
    with Connection(transport=AtomicFilesystemTransport, transport_options=options) as conn:
        queue = conn.SimpleQueue("q")
        producer.start()
        received = []
        for _ in range(count):
            message = queue.get(timeout=30)
            received.append(message.payload["i"])
            message.ack()
    producer.join()
    assert sorted(received) == list(range(count))
    assert not list(folder.glob("*.partial"))
