"""Workers that come back, with real processes: a worker SIGKILLed while its
specialists wait on the model, and a Redis restarted under a running worker.

Both run the worker as deployed (with --beat, gossip and mingle on), with short
heartbeat and sweep periods so the test waits seconds, not minutes."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.db import connection
from django.utils import timezone

from ledger import pending
from ledger.models import LedgerEntry
from ledger.rates import price_micros
from reviews.engine import coordinator
from reviews.engine.specialists import NAMES, detector
from reviews.llm.roster import CHEAP, MID
from reviews.models import AgentRun, ReviewRun
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.store.parsed import parse_stored
from revreview.celery import app
from tests import services
from tests.llm.fake_gateway import completion
from tests.llm.helpers import API_KEY
from tests.uploads import DATA, json_upload

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

SAMPLES = services.ROOT / "samples"
LITE, FLASH = CHEAP, MID  # the default roster
NOTHING = {"add": [], "adjust": [], "dismiss": []}
ANY_REPLY = {**NOTHING, "summary": "Judged by the model."}  # a specialist's or coordinator's
RECOVERY = {  # seconds: beat every 1, silent after 10 (a loaded CI box), sweep every 2
    "HEARTBEAT_SECONDS": "1",
    "HEARTBEAT_TIMEOUT_SECONDS": "10",
    "SWEEP_INTERVAL_SECONDS": "2",
    "DISPATCH_GRACE_SECONDS": "3",
    "QUEUED_REDISPATCH_SECONDS": "20",
}
DEPLOYED = [*services.WORKER_ARGS, "--beat"]


@pytest.fixture(autouse=True)
def through_the_broker():
    """This process sends tasks to the worker instead of running them itself."""
    app.conf.task_always_eager = False
    yield
    app.conf.task_always_eager = True


def worker_env(redis_url: str, data_dir: Path, **extra: str) -> dict[str, str]:
    db = connection.settings_dict
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "revreview.settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": redis_url,
        "DATA_DIR": str(data_dir),  # beat's schedule file
        "CELERY_TASK_ALWAYS_EAGER": "false",
        **RECOVERY,
        **extra,
    }


def wait_for(run: ReviewRun, seconds: float, log: Path) -> ReviewRun:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.is_finished:
            return run
        time.sleep(0.5)
    pytest.fail(f"run {run.pk} still {run.status} after {seconds:.0f} s:\n{tail(log)}")


def tail(log: Path) -> str:
    return log.read_text()[-5000:] if log.exists() else "(no log)"


def expected_findings(run: ReviewRun) -> Counter:
    """What the detectors find in the run's batch, fused: the model replies change
    nothing, so the run must hold exactly these, each once."""
    parsed = parse_stored(run.batch)
    found = [f for name in NAMES for f in detector(name)(parsed, settings.REVIEW_RULES)]
    review = coordinator.fuse(found, run.batch.counts, [])
    return Counter((f.kind, tuple(f.record_ids)) for f in review.findings)


def test_a_run_whose_worker_was_killed_finishes_on_another(
    postgres, redis_url, fake_gateway, tmp_path
):
    # The first two model calls (one per pool process) hang: the worker is killed then.
    fake_gateway.script(LITE, *(completion(NOTHING, delay=60) for _ in range(2)))
    fake_gateway.script(LITE, *(completion(NOTHING) for _ in range(4)))
    fake_gateway.script(FLASH, completion({"summary": "Reviewed after a worker died."}))
    env = worker_env(
        redis_url,
        tmp_path,
        LLM_BASE_URL=fake_gateway.base_url,
        LLM_API_KEY=API_KEY,
        DAILY_TOKEN_BUDGET="0",  # the shared test Redis holds its counter
    )
    log = tmp_path / "worker.log"
    run = submit([json_upload(json.loads((SAMPLES / "full.json").read_text()))]).run

    with services.celery_worker(env, DEPLOYED, log) as first:
        deadline = time.monotonic() + 60
        while len(fake_gateway.requests_for(LITE)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(fake_gateway.requests_for(LITE)) == 2, tail(log)
        running = set(
            run.agents.filter(status=AgentRun.Status.RUNNING).values_list("agent", flat=True)
        )
        assert len(running) == 2, running
        # Each call was in the ledger before it was sent, with the tokens it sends.
        in_flight = LedgerEntry.objects.filter(outcome=LedgerEntry.Outcome.PENDING)
        assert set(in_flight.values_list("agent", flat=True)) == running
        sent = list(in_flight.values_list("model_attempted", "input_tokens", "cost_micros"))
        assert all(
            tokens > 0 and cost == price_micros(model, tokens, 0, 0) for model, tokens, cost in sent
        ), sent
        services.kill_worker(first)
    killed_at = time.monotonic()

    with services.celery_worker(env, DEPLOYED, log) as second:
        run = wait_for(run, 180, log)
        assert second.poll() is None
    assert time.monotonic() - killed_at < 180
    assert (run.status, run.degraded) == (ReviewRun.Status.DONE, False), (
        run.error,
        list(run.agents.values_list("agent", "status", "model", "error")),
        list(run.ledger_entries.values_list("agent", "model_requested", "outcome")),
    )
    agents = {a.agent: a for a in run.agents.all()}
    assert {a.status for a in agents.values()} == {AgentRun.Status.DONE}
    assert {name for name, a in agents.items() if a.retries} == running  # sent again
    assert dict(run.agents.values_list("agent", "model")) == {
        **dict.fromkeys(NAMES, LITE),
        AgentRun.COORDINATOR: FLASH,
    }
    # One ledger row per call that answered, and one for each call the kill cut off:
    # sent, so counted; pending until the sweep finds it past the call's timeout, lost.
    pending.mark_lost(timezone.now() + pending.lost_after())
    rows = Counter(run.ledger_entries.values_list("agent", "outcome"))
    assert rows == Counter(
        {
            **{(name, "ok"): 1 for name in NAMES},
            ("coordinator", "ok"): 1,
            **{(name, "lost"): 1 for name in running},
        }
    )
    assert LedgerEntry.objects.count() == 7
    lost = LedgerEntry.objects.filter(outcome=LedgerEntry.Outcome.LOST)
    assert all(
        row.input_tokens > 0
        and row.cost_micros == price_micros(row.model_attempted, row.input_tokens, 0, 0)
        for row in lost
    )
    stored = Counter((f.kind, tuple(f.record_ids)) for f in run.findings.all())
    assert stored == expected_findings(run)
    assert max(stored.values()) == 1
    assert run.verdict.summary == "Reviewed after a worker died."


# --- a Redis of this test's own, restarted under the worker ----------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def private_redis(directory: Path):
    """A redis-server on a free loopback port, keeping its data in `directory` across a
    restart (saved on shutdown, as the compose service's does). Never the shared one."""
    if not shutil.which("redis-server"):
        pytest.skip("redis-server is not installed")
    port = free_port()
    server = PrivateRedis(port, directory)
    server.start()
    try:
        yield server
    finally:
        server.stop()


class PrivateRedis:
    def __init__(self, port: int, directory: Path) -> None:
        self.port, self.directory = port, directory
        self.url = f"redis://127.0.0.1:{port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
            + ["--dir", str(self.directory), "--save", "3600 1", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis.from_url(self.url, socket_connect_timeout=1)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                client.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.1)
        raise RuntimeError(f"redis-server on port {self.port} did not start")

    def stop(self) -> None:
        """SIGTERM: Redis saves its data and exits, as `docker compose restart` has it."""
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=20)


def compose_health_check() -> str:
    """The review worker's health check command in docker-compose.yml (the webhooks
    worker has its own), as its shell runs it."""
    compose = (services.ROOT / "docker-compose.yml").read_text()
    (command,) = re.findall(r'"CMD-SHELL", "(celery [^"]*inspect ping -d celery@[^"]*)"', compose)
    return command.replace("$$", "$")


def cli_review(env: dict[str, str], path: Path) -> subprocess.Popen:
    """`manage.py review FILE --worker` in a process of its own, on the test's Redis."""
    return subprocess.Popen(
        [sys.executable, "manage.py", "review", str(path)]
        + ["--worker", "--no-cache", "--format", "json", "--timeout", "150"],
        cwd=services.ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_the_worker_survives_a_redis_restart_and_queued_runs_finish(
    postgres, fake_gateway, tmp_path
):
    # Every model call takes 3 s, so the first review is mid-call when Redis goes away.
    fake_gateway.script(LITE, *(completion(ANY_REPLY, delay=3) for _ in range(20)))
    fake_gateway.script(FLASH, *(completion(ANY_REPLY, delay=3) for _ in range(5)))
    log = tmp_path / "worker.log"
    (tmp_path / "redis").mkdir()
    with private_redis(tmp_path / "redis") as server:
        env = worker_env(
            server.url, tmp_path, LLM_BASE_URL=fake_gateway.base_url, LLM_API_KEY=API_KEY
        )
        with services.celery_worker(env, DEPLOYED, log) as worker:
            mid = cli_review(env, DATA / "seed-example.json")
            deadline = time.monotonic() + 60
            while not fake_gateway.requests and time.monotonic() < deadline:
                time.sleep(0.1)
            assert fake_gateway.requests, tail(log)

            server.stop()  # with a model call of the first review out
            # Sent while Redis is down: the dispatch never reaches the broker. (Other
            # batches each time: a failback would serve a last good run of the same.)
            during = cli_review(env, SAMPLES / "lite.json")
            deadline = time.monotonic() + 60
            while ReviewRun.objects.count() < 2 and time.monotonic() < deadline:
                time.sleep(0.2)
            time.sleep(3)  # its dispatch and the publish retries have failed by now
            assert ReviewRun.objects.filter(status="queued", dispatched_at=None).count() == 1
            assert worker.poll() is None, tail(log)
            server.start()
            after = cli_review(env, SAMPLES / "trivial.json")  # sent once it is back

            for review in (mid, during, after):
                output = review.communicate(timeout=170)[0]
                assert review.returncode in (0, 1), output[-3000:] + tail(log)
            time.sleep(3)  # a crash after reconnecting would show by now
            assert worker.poll() is None, tail(log)
            # And the deployment's health check finds it answering through the broker.
            check = subprocess.run(
                ["sh", "-c", compose_health_check()],
                cwd=services.ROOT,
                env={
                    **env,
                    "HOSTNAME": socket.gethostname(),
                    "PATH": f"{Path(sys.executable).parent}:{env.get('PATH', '')}",
                },
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert check.returncode == 0, check.stdout + check.stderr
            assert "pong" in check.stdout
    mid_run, during_run, after_run = ReviewRun.objects.order_by("pk")
    for run in (mid_run, during_run, after_run):
        assert (run.status, run.degraded) == (ReviewRun.Status.DONE, False), run.error
    # The review in flight: each call that answered has its row once, and its agent the
    # model's judgement (a call not yet started when Redis went, its breaker out of
    # reach, was not made: that agent's rules stand, with the reason).
    assert mid_run.mode == "fresh"
    calls = Counter(mid_run.ledger_entries.values_list("agent", "outcome"))
    assert calls and set(calls.values()) == {1} and {o for _, o in calls} == {"ok"}
    models = dict(mid_run.agents.values_list("agent", "model"))
    assert {models[agent] for agent, _ in calls} == {LITE}
    # The one whose dispatch failed was sent by the sweep (and, its budget counter out
    # of reach when it was asked, reviewed by the detectors alone, saying why).
    assert during_run.retries >= 1 and during_run.mode == "failback"
    assert "budget counter is unavailable" in during_run.reason
    assert "Connection to broker lost" in log.read_text()
    assert "Unrecoverable error" not in log.read_text()
