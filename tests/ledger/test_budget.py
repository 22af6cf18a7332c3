"""The daily token budget: atomic reservations in Redis and, embedded, in the database;
the Redis counter rebuilt from the ledger after a restart."""

import os
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta

import pytest
import redis
from django.db import connection

from ledger import budget
from ledger.models import BudgetDay
from tests.orchestration.helpers import make_entry
from tests.services import ROOT

ESTIMATE = 1_000
CALLS_THAT_FIT = 5
CONCURRENT = 20


@pytest.fixture
def small_budget(settings):
    settings.DAILY_TOKEN_BUDGET = CALLS_THAT_FIT * ESTIMATE
    settings.BUDGET_RESERVATION_TOKENS = ESTIMATE
    return settings.DAILY_TOKEN_BUDGET


def reserve_concurrently(count: int) -> list[budget.Reservation | None]:
    """`count` threads reserve at once; each has its own database and Redis connection."""
    start = threading.Barrier(count)
    results: list = [None] * count

    def reserve(index: int) -> None:
        try:
            start.wait()
            results[index] = budget.reserve()
        except Exception as error:  # shown by the assertion, not lost in a thread
            results[index] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=reserve, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def today_at(hour: int) -> datetime:
    now = datetime.now(UTC)
    return now.replace(hour=hour, minute=0, second=0, microsecond=0)


@pytest.mark.django_db
def test_budget_reserve_and_settle_to_actual_usage(redis_url, small_budget):
    reservation = budget.reserve()
    assert reservation == budget.Reservation(day=budget.utc_today(), tokens=ESTIMATE)
    assert budget.spent_today() == ESTIMATE
    budget.settle(reservation, 420)
    assert budget.spent_today() == 420


@pytest.mark.django_db
def test_budget_refuses_a_reservation_that_does_not_fit(redis_url, small_budget):
    granted = [budget.reserve() for _ in range(CALLS_THAT_FIT + 1)]
    assert granted[-1] is None
    assert budget.spent_today() == small_budget
    budget.settle(granted[0], 0)  # a failed call gives its reservation back
    assert budget.reserve() is not None


@pytest.mark.django_db
def test_budget_zero_means_unlimited_but_still_counts(redis_url, settings):
    settings.DAILY_TOKEN_BUDGET = 0
    assert all(budget.reserve(10**9) for _ in range(3))
    assert budget.spent_today() == 3 * 10**9


@pytest.mark.django_db(transaction=True)
def test_budget_20_concurrent_reservations_in_redis(postgres, redis_url, small_budget):
    results = reserve_concurrently(CONCURRENT)
    assert [r for r in results if isinstance(r, Exception)] == []
    granted = [r for r in results if r is not None]
    assert len(granted) == CALLS_THAT_FIT
    for reservation in granted:
        budget.settle(reservation, ESTIMATE)
    assert budget.spent_today() <= small_budget + ESTIMATE


@pytest.mark.django_db(transaction=True)
def test_budget_20_concurrent_reservations_in_the_database(postgres, settings, small_budget):
    settings.REDIS_URL = ""  # embedded mode: BudgetDay and conditional UPDATEs
    results = reserve_concurrently(CONCURRENT)
    assert [r for r in results if isinstance(r, Exception)] == []
    assert len([r for r in results if r is not None]) == CALLS_THAT_FIT
    assert BudgetDay.objects.get(day=budget.utc_today()).reserved == small_budget
    assert budget.spent_today() <= small_budget + ESTIMATE


# One CLI-like process: waits for the start signal, then reserves from several threads.
RESERVE_IN_A_PROCESS = """
import os, sys, threading, time, django
django.setup()
from django.conf import settings
from django.db import connection
from ledger import budget
settings.DAILY_TOKEN_BUDGET = int(sys.argv[1])
go, estimate, threads = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
results = []
def reserve():
    try:
        results.append("granted" if budget.reserve(estimate) else "refused")
    finally:
        connection.close()
while not os.path.exists(go):
    time.sleep(0.01)
workers = [threading.Thread(target=reserve) for _ in range(threads)]
for w in workers: w.start()
for w in workers: w.join()
print(" ".join(results))
"""
PROCESSES = 4  # x 5 threads: 20 reservations from separate processes (2-core CI machines)


@pytest.mark.integration  # separate manage.py processes
def test_budget_20_reservations_from_cli_processes_share_one_sqlite_budget(tmp_path):
    """The embedded mode as deployed: SQLite, no Redis, separate processes."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "revreview.settings",
        "DATA_DIR": str(tmp_path),
        "DATABASE_URL": "",
        "REDIS_URL": "",
    }
    manage = [sys.executable, "manage.py", "migrate", "-v0"]
    subprocess.run(manage, cwd=ROOT, env=env, check=True, timeout=120)
    go = tmp_path / "go"
    args = [str(CALLS_THAT_FIT * ESTIMATE), str(go), str(ESTIMATE), str(CONCURRENT // PROCESSES)]
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", RESERVE_IN_A_PROCESS, *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(PROCESSES)
    ]
    go.touch()
    outputs = "".join(p.communicate(timeout=120)[0] for p in processes).split()
    assert [p.returncode for p in processes] == [0] * PROCESSES
    assert outputs.count("granted") == CALLS_THAT_FIT
    assert outputs.count("refused") == CONCURRENT - CALLS_THAT_FIT


@pytest.mark.django_db
def test_budget_counter_rebuilt_from_the_ledger_after_redis_restart(postgres, redis_url, settings):
    settings.DAILY_TOKEN_BUDGET = 10_000
    settings.BUDGET_RESERVATION_TOKENS = ESTIMATE
    make_entry(created_at=today_at(0), input_tokens=3_000, output_tokens=500)
    make_entry(created_at=today_at(0) - timedelta(hours=1), input_tokens=99_999)  # yesterday
    assert budget.spent_today() == 3_500  # first use: built from today's ledger rows

    reservation = budget.reserve()
    make_entry(created_at=datetime.now(UTC), input_tokens=800, cached_tokens=300, output_tokens=200)
    budget.settle(reservation, 1_000)
    assert budget.spent_today() == 4_500

    redis.Redis.from_url(redis_url).flushdb()  # what a Redis restart without persistence leaves
    assert budget.spent_today() == 4_500 == budget.ledger_tokens(budget.utc_today())


@pytest.mark.django_db
def test_budget_rebuilt_counter_still_enforces_the_limit(postgres, redis_url, settings):
    settings.DAILY_TOKEN_BUDGET = 10_000
    make_entry(created_at=datetime.now(UTC), input_tokens=9_500)
    redis.Redis.from_url(redis_url).delete(f"revreview:budget:{budget.utc_today()}")
    assert budget.reserve(1_000) is None  # not reset to zero: the ledger says 9,500
    assert budget.reserve(500) is not None


@pytest.mark.django_db
def test_budget_settle_after_the_key_vanished_takes_the_ledger(postgres, redis_url, settings):
    settings.DAILY_TOKEN_BUDGET = 10_000
    reservation = budget.reserve(2_000)
    redis.Redis.from_url(redis_url).flushdb()
    make_entry(created_at=datetime.now(UTC), input_tokens=1_200, output_tokens=100)
    budget.settle(reservation, 1_300)
    assert budget.spent_today() == 1_300


@pytest.mark.django_db
def test_budget_database_counter_starts_from_the_ledger(postgres, settings):
    settings.REDIS_URL = ""
    settings.DAILY_TOKEN_BUDGET = 10_000
    make_entry(created_at=datetime.now(UTC), input_tokens=6_000, output_tokens=1_000)
    assert budget.reserve(4_000) is None
    reservation = budget.reserve(3_000)
    budget.settle(reservation, 2_500)
    assert budget.spent_today() == 9_500


def test_budget_seconds_until_reset_counts_to_utc_midnight():
    now = datetime(2026, 11, 22, 23, 59, 30, tzinfo=UTC)
    assert budget.seconds_until_reset(now) == 30
