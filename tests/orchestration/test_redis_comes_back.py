"""Runs queued before Redis went away are sent again as soon as it comes back empty,
not QUEUED_REDISPATCH_SECONDS later: the sweep's canary key is gone, so every message
that was waiting in Redis is taken as lost. A Redis of the test's own, on a free port,
stopped and started without its data (never the shared one)."""

from __future__ import annotations

import json

import pytest
from django.utils import timezone

from ledger import redis_client
from reviews.models import ReviewRun
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run import sweep
from tests.orchestration.test_worker_recovery import private_redis
from tests.uploads import DATA, json_upload

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

SEED = json.loads((DATA / "seed-example.json").read_text())


def test_a_queued_run_is_sent_again_when_redis_comes_back_empty(settings, tmp_path):
    settings.QUEUED_REDISPATCH_SECONDS = 900
    with private_redis(tmp_path) as server:
        settings.REDIS_URL = server.url
        redis_client._client.cache_clear()
        sweep.sweep()  # the first sweep sets the canary
        run = submit([json_upload(SEED)], dispatch=False).run
        ReviewRun.objects.filter(pk=run.pk).update(dispatched_at=timezone.now())

        assert run.pk not in sweep.sweep().start  # sent a moment ago: waits its turn

        server.stop()
        down = sweep.sweep()  # Redis away: nothing to tell, nothing breaks
        assert not down.broker_forgot and run.pk not in down.start
        (tmp_path / "dump.rdb").unlink()  # back without its data, messages and all
        server.start()

        back = sweep.sweep()
        assert back.broker_forgot
        assert run.pk in back.start
        assert not sweep.sweep().broker_forgot  # once
    redis_client._client.cache_clear()
