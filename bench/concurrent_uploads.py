"""Several big uploads through the API at once, each reviewed to the end by the worker as
deployed: how long until every run is done, and the memory of web and worker together.

    .venv/bin/python bench/concurrent_uploads.py [--uploads 4] [--records 1000000]
        [--concurrency N] [--timeout 1800] [--out DIR] [--keep]

Generates one batch per upload (reviews.samplegen, a seed each, so no upload is served
from another's cached review), serves revreview on a throwaway Postgres database and a
Redis of its own: gunicorn as the image's CMD runs it (Dockerfile) and the review worker
with the command docker-compose.yml gives it (prefork, --concurrency=2, -Q celery,sweep,
--beat; --concurrency overrides it). Then it posts every upload to POST /api/v1/batches
by token at once (a thread each, the JSON as the body), polls the database until each
batch is rejected or its run is done or failed, and prints the time from the first
byte sent to the last run finished, and the peak memory: the largest sum of the RSS of
every gunicorn and worker process (pool children and beat too) seen at one moment.

Every upload is read by a worker (PARSE_IN_WEB_MAX_BYTES=0), as one over 10 MB is, so
a small run (the test's 2 x 2,000 records) takes the path a 1M-record one takes. The
models are off (LLM_BASE_URL empty): the detectors review alone. Exits 1 unless every
run finished `done`.

Needs Postgres (BENCH_POSTGRES_URL, default postgres://revreview@127.0.0.1:5432/postgres)
and redis-server on the PATH (or BENCH_REDIS_URL: a Redis database nothing else uses).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import psutil
import psycopg
import redis

sys.path.insert(0, str(Path(__file__).resolve().parent))
import upload_memory  # noqa: E402  (a sibling script: its user, token and port helpers)

ROOT = Path(__file__).resolve().parent.parent
POLL_SECONDS = 0.1


def admin_url() -> str:
    """The Postgres server's maintenance database, where the bench makes its own."""
    return os.environ.get("BENCH_POSTGRES_URL", upload_memory.ADMIN_URL)


def worker_command(concurrency: int | None) -> list[str]:
    """The review worker's command in docker-compose.yml, run by this interpreter."""
    compose = (ROOT / "docker-compose.yml").read_text()
    (command,) = re.findall(r"command: (celery -A revreview worker --beat .*)", compose)
    args = shlex.split(command)[1:]
    if concurrency is not None:
        flag = f"--concurrency={concurrency}"
        args = [flag if arg.startswith("--concurrency=") else arg for arg in args]
    return [sys.executable, "-m", "celery", *args]


def web_command(port: int) -> list[str]:
    """gunicorn as the image's CMD runs it (Dockerfile), on a loopback port."""
    (cmd,) = re.findall(r"^CMD (\[.*\])$", (ROOT / "Dockerfile").read_text(), re.M)
    args = json.loads(cmd)[1:]
    args[args.index("--bind") + 1] = f"127.0.0.1:{port}"
    return [sys.executable, "-m", "gunicorn", *args]


def generate(out: Path, records: int, seed: int) -> Path:
    path = out / f"concurrent-{records}-{seed}.json"
    if not path.exists():
        code = "import sys; from reviews.samplegen import write_sample; "
        code += "write_sample(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))"
        command = [sys.executable, "-c", code, str(path), str(records), str(seed)]
        subprocess.run(command, cwd=ROOT, check=True)
    return path


class PeakMemory:
    """Polls the summed RSS of process trees (each root and its descendants) in a thread."""

    def __init__(self, **roots: int) -> None:
        self.roots = {name: psutil.Process(pid) for name, pid in roots.items()}
        self.peak = 0  # of the sum over every tree, at one moment
        self.peaks = dict.fromkeys(roots, 0)  # of each tree on its own
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            sizes = {name: tree_rss(root) for name, root in self.roots.items()}
            self.peak = max(self.peak, sum(sizes.values()))
            for name, size in sizes.items():
                self.peaks[name] = max(self.peaks[name], size)
            time.sleep(POLL_SECONDS)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def tree_rss(root: psutil.Process) -> int:
    try:
        members = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0
    total = 0
    for member in members:
        try:
            total += member.memory_info().rss
        except psutil.Error:
            pass
    return total


@dataclass
class Upload:
    path: Path
    status: int = 0
    batch_id: int | None = None
    seconds: float = 0.0  # until the answer
    answer: str = ""


def post(base: str, token: str, upload: Upload, start: threading.Barrier) -> None:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    size = upload.path.stat().st_size
    start.wait()
    began = time.monotonic()
    with httpx.Client(base_url=base, timeout=1200) as client, upload.path.open("rb") as handle:
        response = client.post(
            "/api/v1/batches",
            content=iter(lambda: handle.read(1 << 20), b""),
            headers={**headers, "Content-Length": str(size)},
        )
    upload.seconds = time.monotonic() - began
    upload.status = response.status_code
    try:
        upload.batch_id = response.json().get("batch_id")
    except ValueError:
        pass
    upload.answer = response.text[:300]


FINISHED = ("done", "failed")
STATE = """
SELECT b.id, b.status, b.errors, r.id, r.status, r.mode, r.degraded, r.error,
       r.started_at, r.finished_at, v.decision
FROM reviews_batch b
LEFT JOIN reviews_reviewrun r ON r.batch_id = b.id
LEFT JOIN reviews_verdict v ON v.run_id = r.id
WHERE b.id = ANY(%s) ORDER BY b.id, r.id
"""


def poll(database_url: str, batch_ids: list[int], timeout: float) -> dict[int, tuple]:
    """Each batch's row joined with its latest run, once every batch is rejected or its
    run finished, or at the timeout."""
    deadline = time.monotonic() + timeout
    with psycopg.connect(database_url, autocommit=True) as db:
        while True:
            rows = {row[0]: row for row in db.execute(STATE, [batch_ids]).fetchall()}
            if all(row[1] == "rejected" or row[4] in FINISHED for row in rows.values()) and len(
                rows
            ) == len(batch_ids):
                return rows
            if time.monotonic() > deadline:
                return rows
            time.sleep(0.5)


@contextmanager
def own_redis(directory: Path):
    """BENCH_REDIS_URL, or a redis-server of this run's own on a free loopback port: a
    worker on a shared broker database would take other processes' tasks."""
    if os.environ.get("BENCH_REDIS_URL"):
        yield os.environ["BENCH_REDIS_URL"]
        return
    if not shutil.which("redis-server"):
        raise SystemExit("needs redis-server on the PATH, or BENCH_REDIS_URL")
    port = upload_memory.free_port()
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory),
         "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"redis://127.0.0.1:{port}/0"
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                redis.Redis.from_url(url, socket_connect_timeout=1).ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(20)


@contextmanager
def started(command: list[str], env: dict[str, str], log: Path):
    """A server process of this bench, stopped (and, if it will not stop, killed with its
    children: only processes this bench started) on exit."""
    with log.open("ab") as out:
        process = psutil.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(60)
        except psutil.TimeoutExpired:
            for member in [*process.children(recursive=True), process]:
                try:
                    member.kill()
                except psutil.Error:
                    pass


# A loaded 2-core machine took a minute to answer gunicorn's first request.
START_SECONDS = 300


def wait_for_web(base: str, log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        try:
            httpx.get(base + "/accounts/login/", timeout=30)
            return
        except httpx.HTTPError:
            time.sleep(0.3)
    raise SystemExit(f"gunicorn did not answer:\n{log.read_text(errors='replace')[-3000:]}")


def wait_for_worker(log: Path, process: psutil.Popen, seconds: float = START_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if " ready." in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            break
        time.sleep(0.3)
    raise SystemExit(f"the worker did not start:\n{log.read_text(errors='replace')[-3000:]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uploads", type=int, default=4)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--concurrency", type=int, help="the worker's (compose's: 2)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds for all runs")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    parser.add_argument("--keep", action="store_true", help="keep the generated batches")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    paths = [generate(args.out, args.records, seed) for seed in range(1, args.uploads + 1)]
    os.sync()  # the files' write-back would otherwise land in the timed part
    size = max(p.stat().st_size for p in paths)
    database = f"revreview_bench_concurrent_{os.getpid()}"
    database_url = admin_url().rsplit("/", 1)[0] + "/" + database
    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="concurrent-")))
        redis_url = stack.enter_context(own_redis(scratch))
        with psycopg.connect(admin_url(), autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{database}"')
        stack.callback(drop_database, database)
        env = server_env(database_url, redis_url, scratch, size)
        manage = [sys.executable, "manage.py"]
        subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        made = subprocess.run(
            [*manage, "shell", "-c", upload_memory._CREATE_USER], cwd=ROOT, env=env,
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        token = made.stdout.strip().splitlines()[-1]
        port = upload_memory.free_port()
        base = f"http://127.0.0.1:{port}"
        web = stack.enter_context(started(web_command(port), env, scratch / "web.log"))
        worker_log = scratch / "worker.log"
        worker = stack.enter_context(started(worker_command(args.concurrency), env, worker_log))
        wait_for_web(base, scratch / "web.log")
        wait_for_worker(worker_log, worker)
        uploads = [Upload(path) for path in paths]
        barrier = threading.Barrier(len(uploads) + 1)
        threads = [threading.Thread(target=post, args=(base, token, u, barrier)) for u in uploads]
        with PeakMemory(web=web.pid, worker=worker.pid) as memory:
            for thread in threads:
                thread.start()
            barrier.wait()
            began = datetime.now(UTC)
            for thread in threads:
                thread.join()
            ids = [u.batch_id for u in uploads if u.batch_id is not None]
            rows = poll(database_url, ids, args.timeout) if ids else {}
            waited = (datetime.now(UTC) - began).total_seconds()
        ok = report(args, uploads, rows, began, waited, memory)
        if not ok:
            print(f"\nworker log (last lines):\n{worker_log.read_text(errors='replace')[-4000:]}")
    if not args.keep:
        for path in paths:
            path.unlink(missing_ok=True)
            path.with_suffix(".truth.json").unlink(missing_ok=True)
    return 0 if ok else 1


def server_env(database_url: str, redis_url: str, scratch: Path, size: int) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "revreview.settings",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "DATA_DIR": str(scratch),  # beat's schedule, the spool
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DEBUG": "false",
        "SECURE_SSL_REDIRECT": "false",  # plain HTTP on loopback
        "SESSION_COOKIE_SECURE": "false",
        "CSRF_COOKIE_SECURE": "false",
        "MAX_UPLOAD_BYTES": str(max(size + 1, 200 * 1024 * 1024)),
        "PARSE_IN_WEB_MAX_BYTES": "0",
        "DEMO_PASSWORD": upload_memory.PASSWORD,
        "RATE_LIMIT_PER_HOUR": "0",
        "DAILY_TOKEN_BUDGET": "0",
        "LLM_BASE_URL": "",
        "CELERY_TASK_ALWAYS_EAGER": "false",
    }


def drop_database(database: str) -> None:
    with psycopg.connect(admin_url(), autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


def report(args, uploads: list[Upload], rows: dict, began: datetime, waited: float, memory) -> bool:
    """Print the table and the totals; True if every run finished `done`."""
    mib = 2**20
    print(
        f"{args.uploads} uploads of {args.records:,} records at once, worker "
        f"{' '.join(worker_command(args.concurrency)[2:])}"
    )
    print("| upload | MB | answer | s | batch | run | status | verdict | run s | done at s |")
    print("|---|---:|---|---:|---|---|---|---|---:|---:|")
    finished = []
    for number, upload in enumerate(uploads, 1):
        row = rows.get(upload.batch_id)
        megabytes = upload.path.stat().st_size / 1e6
        cells = [str(number), f"{megabytes:.0f}", str(upload.status), f"{upload.seconds:.1f}"]
        if row is None:
            cells += [str(upload.batch_id or upload.answer[:80]), "", "", "", "", ""]
        else:
            (_, batch_status, errors, run_id, status, mode, degraded, error) = row[:8]
            started_at, finished_at, decision = row[8:]
            state = f"{status}{' (degraded)' if degraded else ''}" if status else "no run"
            if error or (batch_status == "rejected" and errors):
                state += f": {(error or '; '.join(errors))[:120]}"
            run_s = (finished_at - started_at).total_seconds() if finished_at and started_at else 0
            done_at = (finished_at - began).total_seconds() if finished_at else 0
            if finished_at:
                finished.append(done_at)
            cells += [
                f"{upload.batch_id} {batch_status}",
                f"{run_id or ''} {mode or ''}",
                state,
                decision or "",
                f"{run_s:.1f}" if run_s else "",
                f"{done_at:.1f}" if done_at else "",
            ]
        print("| " + " | ".join(cells) + " |")
    done = sum(row[4] == "done" for row in rows.values())
    all_done = done == len(uploads)
    if all_done:
        last = max(finished)
        print(f"\nall done: {last:.1f} s from the first byte sent to the last run finished")
    else:
        last = max(finished, default=0.0)
        print(
            f"\nNOT all done: {done} of {len(uploads)} runs done, the last {last:.1f} s from "
            f"the first byte sent; waited {waited:.1f} s"
        )
    print(
        f"peak memory: {memory.peak / mib:,.0f} MiB, web and worker together "
        f"(web alone {memory.peaks['web'] / mib:,.0f} MiB, "
        f"worker alone {memory.peaks['worker'] / mib:,.0f} MiB)"
    )
    return all_done


if __name__ == "__main__":
    sys.exit(main())
