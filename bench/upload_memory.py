"""The web process's memory while it receives a big upload, through the live server.

Generates a ~200 MB JSON batch (1M records, reviews.samplegen), serves revreview with
gunicorn (one sync worker, as deployed) on a fresh Postgres database, signs in and
uploads the file from a streaming client, polling the gunicorn worker's RSS the whole
time. The upload is stored streamed and handed to a Celery worker to parse (none runs
here: the web process is what is measured).

    .venv/bin/python bench/upload_memory.py [--records 1000000] [--keep]
        [--api body|multipart] [--uploads 4]

With --api, the uploads go to POST /api/v1/batches by token instead (the JSON as the
request body, or as multipart files), --uploads times in a row; the peak covers them all.

Needs Postgres (BENCH_POSTGRES_URL, default postgres://revreview@127.0.0.1:5432/postgres)
and Redis (BENCH_REDIS_URL, default redis://127.0.0.1:6379/3).
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import psutil
import psycopg

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
ADMIN_URL = os.environ.get("BENCH_POSTGRES_URL", "postgres://revreview@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/3")
PASSWORD = "bench-" + secrets.token_hex(8)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def generate(records: int) -> Path:
    path = OUT / f"upload-{records}.json"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        code = "import sys; from reviews.samplegen import write_sample; "
        code += "write_sample(sys.argv[1], int(sys.argv[2]), 7)"
        subprocess.run([sys.executable, "-c", code, str(path), str(records)], check=True)
    return path


class PeakRss:
    """Polls the RSS of a process's children (the gunicorn workers) in a thread."""

    def __init__(self, pid: int) -> None:
        self.process = psutil.Process(pid)
        self.peak = 0
        self.baseline = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                rss = max((c.memory_info().rss for c in self.process.children()), default=0)
            except psutil.Error:
                rss = 0
            self.peak = max(self.peak, rss)
            time.sleep(0.02)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def upload(base: str, path: Path) -> tuple[int, str, float]:
    with httpx.Client(base_url=base, timeout=600) as client:
        page = client.get("/accounts/login/").text
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        signed = client.post(
            "/accounts/login/",
            data={"username": "bench", "password": PASSWORD, "csrfmiddlewaretoken": token},
        )
        assert signed.status_code == 302, signed.text[:500]
        page = client.get("/").text
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        started = time.monotonic()
        with path.open("rb") as handle:  # httpx streams a file object in chunks
            response = client.post(
                "/",
                data={"csrfmiddlewaretoken": token},
                files={"files": (path.name, handle, "application/json")},
            )
        return (
            response.status_code,
            response.headers.get("location", ""),
            (time.monotonic() - started),
        )


def api_upload(base: str, path: Path, token: str, how: str) -> tuple[int, str, float]:
    headers = {"Authorization": f"Bearer {token}"}
    started = time.monotonic()
    with httpx.Client(base_url=base, timeout=600, headers=headers) as client:
        with path.open("rb") as handle:  # streamed in chunks either way
            if how == "body":
                response = client.post(
                    "/api/v1/batches",
                    content=iter(lambda: handle.read(1 << 20), b""),
                    headers={"Content-Type": "application/json",
                             "Content-Length": str(path.stat().st_size)},
                )  # fmt: skip
            else:
                response = client.post(
                    "/api/v1/batches", files={"files": (path.name, handle, "application/json")}
                )
    return response.status_code, response.headers.get("location", ""), time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--keep", action="store_true", help="keep the bench database")
    parser.add_argument("--api", choices=["body", "multipart"], help="upload through the API")
    parser.add_argument("--uploads", type=int, default=1, help="uploads in a row")
    args = parser.parse_args()
    path = generate(args.records)
    size = path.stat().st_size
    database = f"revreview_bench_{os.getpid()}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{database}"')
    database_url = ADMIN_URL.rsplit("/", 1)[0] + "/" + database
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "revreview.settings",
        "DATABASE_URL": database_url,
        "REDIS_URL": REDIS_URL,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DEBUG": "false",
        "SECURE_SSL_REDIRECT": "false",  # plain HTTP on loopback
        "SESSION_COOKIE_SECURE": "false",
        "CSRF_COOKIE_SECURE": "false",
        "MAX_UPLOAD_BYTES": str(max(size + 1, 200 * 1024 * 1024)),
        "DEMO_PASSWORD": PASSWORD,
        "RATE_LIMIT_PER_HOUR": "0",
        "DAILY_TOKEN_BUDGET": "0",
    }
    server = None
    try:
        manage = [sys.executable, "manage.py"]
        subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        made = subprocess.run(
            [*manage, "shell", "-c", _CREATE_USER], cwd=ROOT, env=env, check=True,
            capture_output=True, text=True,
        )  # fmt: skip
        token = made.stdout.strip().splitlines()[-1]
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "revreview.wsgi", "--workers", "1",
             "--bind", f"127.0.0.1:{port}", "--timeout", "300"],
            cwd=ROOT, env=env,
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        _wait_for(base)
        with PeakRss(server.pid) as rss:
            time.sleep(0.3)
            rss.baseline = rss.peak
            answers = []
            for _ in range(args.uploads):
                if args.api:
                    answers.append(api_upload(base, path, token, args.api))
                else:
                    answers.append(upload(base, path))
        status = ", ".join(str(a[0]) for a in answers)
        location = answers[-1][1]
        seconds = sum(a[2] for a in answers)
        with psycopg.connect(database_url) as db:
            stored = db.execute(
                "SELECT b.status, f.size_bytes FROM reviews_batch b "
                "JOIN reviews_batchfile f ON f.batch_id = b.id"
            ).fetchall()
        print(f"file: {path.name}, {size / 1e6:.1f} MB ({size:,} bytes), {args.records:,} records")
        print(f"answer: HTTP {status} -> {location} in {seconds:.1f} s")
        print(f"stored: {stored}")
        print(
            f"gunicorn worker RSS: {rss.baseline / 2**20:.0f} MiB idle, "
            f"peak {rss.peak / 2**20:.0f} MiB during the upload"
        )
    finally:
        if server is not None:
            server.terminate()
            server.wait(30)
        if not args.keep:
            with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


# A reviewer of the default workspace: a token acts for one workspace, and the form
# uploads only where its user may.
_CREATE_USER = (
    "import os; from django.contrib.auth.models import User; "
    "from reviews.apiauth.tokens import create_token; "
    "from workspaces.models import Membership, Role, default_workspace; "
    "user = User.objects.create_user('bench', password=os.environ['DEMO_PASSWORD']); "
    "Membership.objects.create(user=user, workspace=default_workspace(), role=Role.REVIEWER); "
    "print(create_token(user, 'bench').secret)"
)


def _wait_for(base: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(base + "/accounts/login/", timeout=2)
            return
        except httpx.HTTPError:
            time.sleep(0.3)
    raise SystemExit("gunicorn did not start")


if __name__ == "__main__":
    main()
