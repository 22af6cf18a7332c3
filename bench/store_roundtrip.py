"""Storing a big upload in the store and reading it back: seconds and peak RSS, through
the local folder and through S3 (moto's server on loopback, in a process of its own).

Each mode runs in a fresh child process (its peak RSS is its own): it stores the file
streamed from disk (store.put, as an upload is stored), reads it back in chunks
(store.chunks), then whole (store.read_bytes, what the parser is given).

    .venv/bin/python bench/store_roundtrip.py [--mb 200] [--modes local,s3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
CHUNK = 1024 * 1024
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench"}


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def upload_file(mb: int) -> Path:
    path = OUT / f"store-{mb}mb.bin"
    if not path.exists() or path.stat().st_size != mb * CHUNK:
        OUT.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as out:
            for _ in range(mb):
                out.write(os.urandom(CHUNK))
    return path


def child(path: Path) -> dict:
    """In the child: Django set up from the environment, then the three steps."""
    import django

    django.setup()
    from revreview import store

    def read(size: int = 64 * 1024):  # as Django's upload handler hands a file over
        with path.open("rb") as data:
            while chunk := data.read(size):
                yield chunk

    size = path.stat().st_size
    figures = {"start_mb": round(peak_mb())}
    started = time.perf_counter()
    stored = store.put("bench/upload", read(), size=size, label=path.name)
    figures["put_s"] = round(time.perf_counter() - started, 2)
    figures["put_peak_mb"] = round(peak_mb())
    started = time.perf_counter()
    read_back = sum(len(chunk) for chunk in store.chunks(stored.key))
    figures["chunks_s"] = round(time.perf_counter() - started, 2)
    figures["chunks_peak_mb"] = round(peak_mb())
    assert read_back == size
    started = time.perf_counter()
    whole = store.read_bytes(stored.key)
    figures["read_bytes_s"] = round(time.perf_counter() - started, 2)
    figures["read_bytes_peak_mb"] = round(peak_mb())
    assert len(whole) == size
    store.delete(stored.key)
    return figures


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_mode(mode: str, path: Path, folder: Path) -> dict:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "revreview.settings",
        "DATA_DIR": str(folder),
        "STORE_DIR": str(folder / "store"),
    }
    server = None
    if mode == "s3":
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        endpoint = f"http://127.0.0.1:{port}"
        make_bucket(endpoint)
        env |= CREDENTIALS | {
            "STORE_URL": "s3://bench/store",
            "STORE_S3_ENDPOINT_URL": endpoint,
            "STORE_S3_REGION": "us-east-1",
        }
    try:
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(path)],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        if server:
            server.terminate()
            server.wait()
    return json.loads(done.stdout.strip().splitlines()[-1])


def make_bucket(endpoint: str) -> None:
    import boto3

    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            client.create_bucket(Bucket="bench")
            return
        except Exception:  # the server is still starting
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--modes", default="local,s3")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child)))
        return
    path = upload_file(args.mb)
    print(f"a {args.mb} MB upload, stored and read back (peaks: RSS of the storing process)")
    for mode in args.modes.split(","):
        with tempfile.TemporaryDirectory(prefix="store-bench-") as folder:
            print(mode, json.dumps(run_mode(mode, path, Path(folder))), flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
