"""Issue 35, the detectors over columns: what a rule over the batch's DuckDB columns costs
beside Python over the records, on one parsed batch, in one process.

    .venv/bin/python bench/detector_columns.py FILE [--repeat 3]

- detectors: each specialist's detector in turn, from a batch with nothing derived (the
  first pays for the shared indexes and columns): run it on two commits to compare;
- pipeline: the pipeline specialist (its queries over the deals' columns,
  reviews/engine/tables/columns.py), split into building the deals' table from the
  parsed records and the rest (the queries, and the findings made of their rows);
- keys: the normalised keys dedup and attribution group by (company domains, contact
  emails and their domains), by normalize.py over the records (what the detectors use)
  and by DuckDB macros equal to it over the same values in a table (the spike: plain
  ASCII values only; the others, a few here, would come back to Python).

Best and median wall and CPU seconds (this process: DuckDB's threads count in its CPU)
over --repeat; each repeat starts from the parsed batch with nothing derived.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "revreview.settings")

# str.strip()'s ASCII characters, as SQL; then normalize.email and normalize.domain as
# DuckDB macros, for values that are plain ASCII without `\u` escape text.
_STRIPPED = " || ".join(f"chr({code})" for code in range(128) if chr(code).isspace())
MACROS = f"""
CREATE MACRO plain(v) AS strlen(v) = length(v) AND NOT contains(v, '\\u');
CREATE MACRO stripped_lower(v) AS lower(trim(v, {_STRIPPED}));
CREATE MACRO normalize_email(v) AS nullif(stripped_lower(v), '');
CREATE MACRO host(t) AS regexp_extract(regexp_extract(regexp_extract(
    regexp_replace(t, '^[a-z][a-z0-9+.-]*://', ''), '^[^/?#]*'), '[^@]*$'), '^[^:]*');
CREATE MACRO without_www(t) AS CASE WHEN starts_with(t, 'www.') THEN t[5:] ELSE t END;
CREATE MACRO normalize_domain(v) AS
    nullif(without_www(rtrim(host(stripped_lower(v)), '.')), '');
CREATE MACRO after_at(a) AS CASE WHEN contains(a, '@') THEN regexp_extract(a, '[^@]*$') END;
"""
KEY_QUERIES = {
    "company domains": "SELECT normalize_domain(v) FROM domains WHERE plain(v)",
    "contact emails": "SELECT normalize_email(v) FROM emails WHERE plain(v)",
    "contact email domains": (
        "SELECT normalize_domain(after_at(normalize_email(v))) FROM emails WHERE plain(v)"
    ),
}


def main(argv: list[str]) -> int:
    import django

    django.setup()
    import duckdb

    from reviews.engine.ingest import UploadedFile, parse_upload
    from reviews.engine.rules import Rules
    from reviews.engine.specialists import NAMES, detector, pipeline
    from reviews.engine.tables import keys
    from reviews.engine.tables.columns import columns

    parser = argparse.ArgumentParser()
    parser.add_argument("file", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    files = [UploadedFile(args.file.name, args.file.read_bytes())]
    batch = parse_upload(files, as_of=None, received_at=datetime.now(UTC))
    rules = Rules()
    times: dict[str, list[tuple[float, float]]] = {}  # step -> (wall s, CPU s) per repeat

    def timed(name: str, work: Callable[[], object]) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        work()
        elapsed = (time.perf_counter() - wall, time.process_time() - cpu)
        times.setdefault(name, []).append(elapsed)

    python_keys = {
        "company domains": keys.company_domains,
        "contact emails": keys.contact_emails,
    }
    for _ in range(args.repeat):
        batch.derived.clear()  # each detector in turn, as the CLI runs them
        for name in NAMES:
            timed(f"detector: {name}", partial(detector(name), batch, rules))
        batch.derived.clear()
        timed("pipeline: the deals' columns", lambda: columns(batch).query("SELECT 1", ("deals",)))
        timed("pipeline: queries and findings", lambda: pipeline.detect(batch, rules))
        for name, make in python_keys.items():
            timed(f"keys, Python: {name}", lambda make=make: make(batch))
        connection = duckdb.connect()
        connection.execute(MACROS)
        for table, values in (
            ("domains", [c.domain for c in batch.companies]),
            ("emails", [c.email for c in batch.contacts]),
        ):
            timed(f"keys, DuckDB: {table} into a table", partial(load, connection, table, values))
        for name, query in KEY_QUERIES.items():
            timed(f"keys, DuckDB: {name}", partial(fetch, connection, query))
    print(f"| step ({args.file.name}) | wall s, best / median | CPU s, best / median |")
    print("|---|---:|---:|")
    for name, runs in times.items():
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        print(
            f"| {name} | {min(walls):.2f} / {statistics.median(walls):.2f} "
            f"| {min(cpus):.2f} / {statistics.median(cpus):.2f} |"
        )
    return 0


def fetch(connection, query: str) -> None:
    connection.execute(query).fetchall()


def load(connection, table: str, values: list) -> None:
    import numpy as np

    _values = {"v": np.array(values, dtype=object)}  # noqa: F841 (read by the query below)
    connection.execute(f"CREATE TABLE {table} AS SELECT v FROM _values")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
