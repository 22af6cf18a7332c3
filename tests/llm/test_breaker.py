"""The per-model circuit breaker, its state in the test Redis: closed -> open ->
half-open (one probe) -> closed, within a process and across two processes."""

import os
import subprocess
import sys
import threading
import time

import pytest
from django.db import connection

from ledger.models import LedgerEntry
from reviews.llm.breaker import Breaker, Decision, State
from reviews.llm.chain import call_with_failback
from reviews.llm.schemas import SpecialistReply
from tests.llm.fake_gateway import completion, error
from tests.services import ROOT

LITE = "google/gemini-3.1-flash-lite"
LITE_BACK = "google/gemini-2.5-flash-lite"
GOOD = {"add": [], "adjust": [], "dismiss": []}
MESSAGES = [{"role": "user", "content": "review"}]


@pytest.fixture
def breaker_settings(settings, breaker_redis):
    # breaker_redis set REDIS_URL too, which the second process is given.
    settings.BREAKER_FAILURE_THRESHOLD = 3
    settings.BREAKER_COOLDOWN_SECONDS = 1
    settings.LLM_TIMEOUT_SECONDS = 1
    return settings


def trip(breaker: Breaker) -> None:
    for _ in range(breaker.threshold):
        breaker.record_failure(Decision.CALL)


def test_opens_after_the_threshold_of_failures(breaker_settings):
    breaker = Breaker(LITE)
    breaker.record_failure(Decision.CALL)
    breaker.record_failure(Decision.CALL)
    assert breaker.state() is State.CLOSED
    assert breaker.allow() is Decision.CALL
    breaker.record_failure(Decision.CALL)
    assert breaker.state() is State.OPEN
    assert breaker.allow() is Decision.REJECT


def test_a_success_resets_the_count_of_failures(breaker_settings):
    breaker = Breaker(LITE)
    breaker.record_failure(Decision.CALL)
    breaker.record_failure(Decision.CALL)
    breaker.record_success(Decision.CALL)
    breaker.record_failure(Decision.CALL)
    breaker.record_failure(Decision.CALL)
    assert breaker.state() is State.CLOSED


def test_breakers_are_per_model(breaker_settings):
    trip(Breaker(LITE))
    assert Breaker(LITE_BACK).state() is State.CLOSED


def test_exactly_one_probe_among_concurrent_callers(breaker_settings):
    trip(Breaker(LITE))
    time.sleep(1.2)  # the cooldown passes
    assert Breaker(LITE).state() is State.HALF_OPEN
    callers = 16
    barrier = threading.Barrier(callers)
    decisions: list[Decision] = []

    def caller() -> None:
        breaker = Breaker(LITE)  # each worker builds its own, as separate tasks do
        barrier.wait()
        decisions.append(breaker.allow())

    threads = [threading.Thread(target=caller) for _ in range(callers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert decisions.count(Decision.PROBE) == 1
    assert decisions.count(Decision.REJECT) == callers - 1

    Breaker(LITE).record_success(Decision.PROBE)
    assert Breaker(LITE).state() is State.CLOSED
    assert Breaker(LITE).allow() is Decision.CALL


def test_a_failed_probe_opens_it_again(breaker_settings):
    breaker = Breaker(LITE)
    trip(breaker)
    time.sleep(1.2)
    assert breaker.allow() is Decision.PROBE
    breaker.record_failure(Decision.PROBE)
    assert breaker.state() is State.OPEN
    assert breaker.allow() is Decision.REJECT


def test_a_late_success_does_not_cut_the_cooldown_short(breaker_settings):
    breaker = Breaker(LITE)
    trip(breaker)
    breaker.record_success(Decision.CALL)  # a call that started before the trip
    assert breaker.state() is State.OPEN


@pytest.mark.django_db
def test_an_open_breaker_sends_calls_straight_to_the_failback(
    breaker_settings, llm_settings, fake_gateway
):
    llm_settings.BREAKER_COOLDOWN_SECONDS = 30  # nothing here waits for it
    fake_gateway.script(LITE, *(error(503) for _ in range(3)))
    fake_gateway.script(LITE_BACK, *(completion(GOOD) for _ in range(4)))
    for _ in range(3):  # three failures of the primary, each served by the failback
        call_with_failback("dedup", LITE, MESSAGES, SpecialistReply)
    assert Breaker(LITE).state() is State.OPEN

    result = call_with_failback("dedup", LITE, MESSAGES, SpecialistReply)
    assert result.model_served == LITE_BACK
    assert len(fake_gateway.requests_for(LITE)) == 3  # the fourth call never reached it
    skipped, served = LedgerEntry.objects.order_by("-id")[:2][::-1]
    assert (skipped.model_requested, skipped.model, skipped.outcome) == (LITE, None, "breaker_open")
    assert (served.model_requested, served.model, served.outcome) == (LITE, LITE_BACK, "failback")


@pytest.mark.django_db(transaction=True)
def test_two_processes_share_the_breaker(postgres, breaker_settings, llm_settings, fake_gateway):
    """A second process trips the breaker with real failing calls; this one sees it
    open, skips the model, and after the cooldown probes it and closes it."""
    cooldown = 4
    llm_settings.BREAKER_COOLDOWN_SECONDS = cooldown
    fake_gateway.script(LITE, *(error(503) for _ in range(3)))
    db = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "revreview.settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": breaker_settings.REDIS_URL,
    }
    child = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.llm.trip_breaker",
            fake_gateway.base_url,
            LITE,
            "3",
            str(cooldown),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert child.returncode == 0, child.stderr
    assert "state: open" in child.stdout
    # The child's calls are in the shared ledger, one row per attempt.
    assert list(LedgerEntry.objects.values_list("outcome", flat=True)) == ["http_error"] * 3

    # This process sees the breaker the other one opened: the model is not called.
    assert Breaker(LITE).state() is State.OPEN
    fake_gateway.script(LITE_BACK, completion(GOOD))
    assert call_with_failback("dedup", LITE, MESSAGES, SpecialistReply).model_served == LITE_BACK
    assert len(fake_gateway.requests_for(LITE)) == 3

    time.sleep(cooldown + 0.3)
    assert Breaker(LITE).state() is State.HALF_OPEN
    fake_gateway.script(LITE, completion(GOOD))
    assert call_with_failback("dedup", LITE, MESSAGES, SpecialistReply).model_served == LITE
    assert len(fake_gateway.requests_for(LITE)) == 4  # the one probe
    assert Breaker(LITE).state() is State.CLOSED
