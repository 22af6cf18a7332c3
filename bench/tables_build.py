"""The batch's tables built from its parse, kept as Parquet and read back: the cost a run
pays once per batch (reviews/engine/tables/), beside the parse itself; then the parsed
batch read back from them (records.py), as every later reader of a kept sync does, beside
a second parse; wall and CPU seconds, peak memory.

    .venv/bin/python bench/tables_build.py FILE [--repeat 3]

FILE: a batch, e.g. from `manage.py make_sample --records 1000000`."""

from __future__ import annotations

import argparse
import gc
import os
import resource
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "revreview.settings")

import django  # noqa: E402

django.setup()

from reviews.engine.ingest import Limits, UploadedFile, parse_upload  # noqa: E402
from reviews.engine.tables.build import build_tables  # noqa: E402
from reviews.engine.tables.profile import fill_rates  # noqa: E402
from reviews.engine.tables.store import read_parquet, read_parsed, write_parquet  # noqa: E402


def timed(label: str, work):
    start, cpu = time.perf_counter(), time.process_time()
    value = work()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"  {label:<16} {wall:6.2f} s  (CPU {cpu:5.2f} s)", flush=True)
    return value


def parse(name: str, data: bytes):
    return parse_upload(
        [UploadedFile(name, data)],
        as_of=None,
        received_at=datetime.now(UTC),
        limits=Limits(max_bytes=len(data) + 1),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    data = args.file.read_bytes()
    for attempt in range(1, args.repeat + 1):
        print(f"{args.file.name}, attempt {attempt}:")
        batch = timed("parse", lambda: parse(args.file.name, data))  # noqa: B023
        tables = timed("build tables", lambda: build_tables(batch))  # noqa: B023
        with tempfile.TemporaryDirectory() as folder:
            kept = Path(folder) / "batch"
            timed("write Parquet", lambda: write_parquet(tables, kept, batch))  # noqa: B023
            size = sum(p.stat().st_size for p in kept.iterdir())
            again = timed("read Parquet", lambda: read_parquet(kept))  # noqa: B023
            views = read_parquet(kept, load=False)
            timed("fill rates", lambda: fill_rates(views))  # noqa: B023
            batch = views = None  # freed before the batch is read back
            gc.collect()
            timed("read the batch", lambda: read_parsed(kept))  # noqa: B023
            gc.collect()
            timed("parse it again", lambda: parse(args.file.name, data))  # noqa: B023
        counts = {n: again.connection.execute(f"SELECT count(*) FROM {n}").fetchone()[0]
                  for n in ("companies", "contacts", "deals")}  # fmt: skip
        print(f"  records {counts}, Parquet {size / 1e6:.1f} MB")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:,.0f} MiB")


if __name__ == "__main__":
    main()
