"""Two workers as on two machines: each with its own local folders (the tables' cache,
the local store), sharing Postgres, Redis and an S3-compatible server on loopback. One
takes the specialists (the dedup one among them), the other only the coordinator
(COORDINATOR_QUEUE); the coordinator's worker reads the batch's tables from the store,
parsing nothing, and the run ends with the findings an in-process review gives."""

from __future__ import annotations

import os
from contextlib import ExitStack
from pathlib import Path

import pytest
from django.db import connection

from reviews.models import ReviewRun
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.store import tables
from revreview import store
from revreview.celery import app
from tests import services
from tests.orchestration.helpers import reviewed_run, seed_batch
from tests.orchestration.test_worker_integration import wait_until_finished
from tests.s3 import worker_env
from tests.uploads import json_upload

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

COORDINATORS = "coordinators"


def a_sync(dataset: str) -> dict:
    batch = seed_batch()
    batch["contacts"].append(
        {"id": "ct_203", "email": "DANA.KIM@vertexrobotics.example", "companyId": "co_201"}
    )
    return {**batch, "dataset": dataset}


def findings(run: ReviewRun) -> list[tuple]:
    return list(
        run.findings.order_by("position").values_list(
            "kind", "severity", "record_ids", "amount_at_risk", "currency", "title", "detail"
        )
    )


def machine_env(server, folder: Path) -> dict[str, str]:
    db = connection.settings_dict
    return {
        **os.environ,
        **worker_env(server),
        "DJANGO_SETTINGS_MODULE": "revreview.settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": services.REDIS_URL,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "COORDINATOR_QUEUE": COORDINATORS,
        "TABLES_DIR": str(folder / "tables"),
        "STORE_DIR": str(folder / "store"),
        "DATA_DIR": str(folder),
    }


def test_two_machines_share_a_batch_through_the_store(postgres, redis_url, s3_store, tmp_path):
    expected = findings(reviewed_run(a_sync("in-process")))  # eager, in this process
    assert expected

    specialists, coordinator = tmp_path / "machine-a", tmp_path / "machine-b"
    quiet = services.QUIET_WORKER_ARGS
    app.conf.task_always_eager = False
    try:
        with ExitStack() as stack:
            workers = [
                stack.enter_context(
                    services.celery_worker(
                        machine_env(s3_store, folder),
                        [*quiet, f"--hostname={name}@%h", f"--queues={queue}"],
                        log=tmp_path / f"{name}.log",
                    )
                )
                for name, folder, queue in (
                    ("specialists", specialists, "celery"),
                    ("coordinator", coordinator, COORDINATORS),
                )
            ]
            run = submit([json_upload(a_sync("on-workers"), "sync.json")], no_cache=True).run
            # The coordinator's worker finishes the run; the other's log tells if it died.
            run = wait_until_finished(run, workers[1], timeout=120)
    finally:
        app.conf.task_always_eager = True

    logs = {name: (tmp_path / f"{name}.log").read_text() for name in ("specialists", "coordinator")}
    assert run.status == ReviewRun.Status.DONE and not run.degraded, logs
    assert findings(run) == expected
    assert "Task reviews.run_specialist[" in logs["specialists"]
    assert "Task reviews.coordinate[" not in logs["specialists"]
    assert "Task reviews.coordinate[" in logs["coordinator"]
    assert "Task reviews.run_specialist[" not in logs["coordinator"]
    # The coordinator's machine had no tables: it fetched those the specialists stored.
    fetched = f"batch {run.batch_id}: its tables fetched from the store"
    assert fetched in logs["coordinator"] and fetched not in logs["specialists"]
    name = tables.tables_folder(run.batch).name
    for machine in (specialists, coordinator):
        assert (machine / "tables" / name / "tables.json").exists()
    assert not (specialists / "store").exists() and not (coordinator / "store").exists()
    assert store.exists(store.upload_key(run.batch_id, 0))  # this process's S3 too
    run.batch.refresh_from_db()
    assert run.batch.fill_rates  # worked out on the coordinator's machine, from the store
