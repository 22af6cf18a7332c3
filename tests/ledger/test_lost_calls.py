"""Every model call is in the ledger before it is sent: a `pending` row, settled when
the reply comes; one never settled (its worker died) is marked `lost` by the sweep once
past the call's timeout, its tokens sent still counted. The killed-worker case with a
real worker is tests/test_worker_recovery.py."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import OperationalError, connection
from django.utils import timezone

from ledger.models import LedgerEntry
from reviews.llm.chain import call_with_failback
from reviews.llm.roster import CHEAP
from reviews.llm.schemas import SpecialistReply
from reviews.orchestration.run import sweep
from tests.llm.fake_gateway import completion
from tests.llm.helpers import API_KEY

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def llm_settings(settings, fake_gateway):
    settings.LLM_BASE_URL = fake_gateway.base_url
    settings.LLM_API_KEY = API_KEY
    settings.DAILY_TOKEN_BUDGET = 0
    return settings


MESSAGES = [{"role": "system", "content": "x" * 4000}, {"role": "user", "content": "judge"}]


def test_a_call_under_way_has_a_pending_row_with_the_tokens_it_sends(llm_settings, fake_gateway):
    llm_settings.LLM_TIMEOUT_SECONDS = 10
    # The reply waits until the watcher has looked (at most 5 s): a row it saw was
    # written before the reply came, however soon that is.
    looked = threading.Event()
    reply = completion({"add": []}, prompt_tokens=1234, delay=5, held=looked)
    fake_gateway.script(CHEAP, reply)
    seen: list[tuple[str, int]] = []

    def watch() -> None:
        deadline = time.monotonic() + 5
        try:
            while not seen and time.monotonic() < deadline:
                try:
                    seen.extend(LedgerEntry.objects.values_list("outcome", "input_tokens"))
                except OperationalError:  # SQLite in memory: a row being written locks
                    pass  # its table for a moment; look again
                time.sleep(0.05)
        finally:
            looked.set()
            connection.close()  # this thread's own

    watcher = threading.Thread(target=watch)
    watcher.start()
    call_with_failback("dedup", CHEAP, MESSAGES, SpecialistReply)
    watcher.join()

    (outcome, sent), *_ = seen
    assert outcome == "pending" and sent >= 1000  # written before the reply came
    (row,) = LedgerEntry.objects.all()
    assert (row.outcome, row.input_tokens) == ("ok", 1234)  # settled in place


def test_the_sweep_marks_old_pending_rows_lost_and_leaves_recent_ones(settings):
    settings.LLM_TIMEOUT_SECONDS = 30
    old = LedgerEntry.objects.create(
        agent="dedup", model_requested=CHEAP, input_tokens=900, cost_micros=90, outcome="pending"
    )
    recent = LedgerEntry.objects.create(
        agent="pipeline", model_requested=CHEAP, input_tokens=800, outcome="pending"
    )
    LedgerEntry.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(seconds=91))

    plan = sweep.sweep()

    assert plan.lost_calls == 1
    old.refresh_from_db()
    recent.refresh_from_db()
    assert (old.outcome, old.input_tokens, old.cost_micros) == ("lost", 900, 90)
    assert recent.outcome == "pending"
