"""Which real services the test suite can use. Under CI=true a missing service is an
error; elsewhere the tests that need it are skipped with a message naming it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
# TEST_SERVICES=none: use neither Postgres nor Redis even where they are up, as the fast
# loop does (`make test-fast`): its tests need neither, and SQLite in memory saves the
# round trips of ~1,000 database tests (121 s on Postgres, about half on SQLite).
NO_SERVICES = os.environ.get("TEST_SERVICES", "").lower() == "none"
NO_SERVICES_REASON = "not used: TEST_SERVICES=none (the fast loop)"

POSTGRES_URL = os.environ.get("TEST_DATABASE_URL", "postgres://revreview@127.0.0.1:5432/revreview")
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


class ServiceMissing(RuntimeError):
    pass


def ensure_postgres(url: str = POSTGRES_URL) -> str | None:
    """Create the test role (with CREATEDB, for pytest-django's test database) through
    the local superuser if it is missing. Returns why Postgres is unusable, or None."""
    import psycopg

    parts = urlsplit(url)
    role = parts.username or "revreview"
    admin = dict(host=parts.hostname, port=parts.port or 5432, dbname="postgres", connect_timeout=3)
    try:
        with psycopg.connect(**admin, user="postgres", autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role]).fetchone()
            if not exists:
                conn.execute(f'CREATE ROLE "{role}" LOGIN CREATEDB')
        with psycopg.connect(**admin, user=role):
            pass
    except psycopg.Error as error:
        return f"PostgreSQL not usable at {parts.hostname}:{parts.port or 5432}: {error}".strip()
    return None


def check_redis(url: str = REDIS_URL) -> str | None:
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError as error:
        return f"Redis not reachable at {url}: {error}"
    return None


ROOT = Path(__file__).resolve().parent.parent


WORKER_ARGS = ["--concurrency=2", "--loglevel=INFO"]
QUIET_WORKER_ARGS = [*WORKER_ARGS, "--without-gossip", "--without-mingle", "--without-heartbeat"]


@contextmanager
def celery_worker(
    env: dict[str, str], args: list[str] | None = None, log: Path | None = None
) -> Iterator[subprocess.Popen]:
    """A real worker process with this environment, stopped on exit. Its log is on
    the process's stdout, for a failing test to show, or in the file `log` (a long
    test's log would fill the pipe). It leads a process group of its own (its pool
    and beat), so a test can kill it all at once (kill_worker)."""
    output = log.open("a") if log else subprocess.PIPE
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "revreview", "worker", *(args or QUIET_WORKER_ARGS)],
        cwd=ROOT,
        env=env,
        stdout=output,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            kill_worker(process)
        if log:
            output.close()


def kill_worker(process: subprocess.Popen) -> None:
    """SIGKILL to the worker and every process of its group: as an OOM kill or a lost
    machine does it, nothing gets to acknowledge, requeue or clean up."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait(timeout=20)
