"""reviews 0022 (health): runs finished before the score was kept are scored from their
stored findings (reviews.engine.health), a served run from the run it reuses; a run that
did not finish has none."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from reviews.models import ReviewRun

# slow: migrations run forwards and back.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

BEFORE = [("reviews", "0021_i38_merge_undo")]


def test_finished_runs_are_scored_from_their_findings(postgres):
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    Batch, Run, Finding = (old.get_model("reviews", m) for m in ("Batch", "ReviewRun", "Finding"))
    batch = Batch.objects.create(
        file_name="b.json", sha256="0" * 64, size_bytes=10, companies=2, deals=1
    )
    as_of = "2026-08-01T09:00:00Z"
    done = Run.objects.create(batch=batch, tier="trivial", as_of=as_of, status="done")
    served = Run.objects.create(
        batch=batch, tier="trivial", as_of=as_of, status="done", mode="cached", reused_run=done
    )
    queued = Run.objects.create(batch=batch, tier="trivial", as_of=as_of, status="queued")
    common = {"category": "c", "kind": "k", "title": "t", "detail": "d"}
    Finding.objects.create(run=done, position=0, severity="critical", record_ids=["dl_1"], **common)
    Finding.objects.create(
        run=done, position=1, severity="warning", record_ids=["co_1", "co_2"], **common
    )
    Finding.objects.create(
        run=done, position=2, severity="suggestion", record_ids=["co_1"], **common
    )

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert ReviewRun.objects.get(pk=done.pk).health == Decimal("50.0")
    assert ReviewRun.objects.get(pk=served.pk).health == Decimal("50.0")
    assert ReviewRun.objects.get(pk=queued.pk).health is None
