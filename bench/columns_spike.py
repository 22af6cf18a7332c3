"""Issue 35's spike: DuckDB or Polars for the batch as columns. The same native JSON
batch (bench/review_scale.py's generator: 1M records, one JSON object holding the three
lists) through each engine, each run in a fresh process:

- read: one table per object, every property the records carry as a column (found in
  every record, not a sample), each record's position kept;
- typed: typed columns beside them: ids, the normalised domain, the normalised email,
  the amount as DECIMAL(18, 2), dates as UTC timestamps (a close date may be epoch
  milliseconds, as HubSpot writes it);
- dedup: companies grouped by normalised domain, the groups of two or more (with their
  ids, in record order) brought back to Python;
- validate: the amounts and dates given but unreadable, and only those, brought back to
  Python as (list, record id, field, value).

    /tmp/spike/bin/python bench/columns_spike.py FILE [--engines duckdb,polars,...]
        [--repeat 3] [--memory-limit 1GB]

A third engine, duckdb-schema-given, is DuckDB told the generator's properties up front:
not the brief's measure (a property nobody named would be lost), it shows what finding
every property costs DuckDB. --memory-limit sets DuckDB's (which spills past it).

Neither engine is a dependency of revreview yet (DuckDB is in the bench extra): run it
with a throwaway venv (`python3.11 -m venv /tmp/spike && /tmp/spike/bin/pip install
duckdb polars`). Per engine: each step's best and median seconds over --repeat
fresh processes, the peak RSS of the process (the largest over the repeats), and what it
found, which must be the same for every engine.
"""

from __future__ import annotations

import argparse
import atexit
import hashlib
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

OBJECTS = ("companies", "contacts", "deals")
# The engine's normalize.domain, as a chain of regular expressions: lower-case and trim;
# no scheme, path, query, user, port, trailing dot or `www.`. A value that is then no
# domain (spaces, no dot) is not grouped: the ingest reports it as invalid.
DOMAIN_STEPS = (
    (r"^[a-z][a-z0-9+.\-]*://", ""),
    (r"[/?#].*$", ""),
    (r"^.*@", ""),
    (r":.*$", ""),
    (r"\.+$", ""),
    (r"^www\.", ""),
)
DOMAIN_SHAPE = r"^[a-z0-9\-]+(\.[a-z0-9\-]+)+$"
AMOUNT_NOISE = r"[\s$,]"  # "$1,200.50", "1 200": currency sign and separators
DATE_FIELDS = {"companies": ("enrichedAt", "updatedAt"), "deals": ("closeDate",)}
EPOCH_MS = r"^\d{10,14}$"
ZSTD = "COMPRESSION zstd"  # Polars' default codec too
CHECKS = (  # list, field, its typed column
    ("deals", "amount", "amount_value"),
    ("deals", "closeDate", "close_at"),
    ("companies", "enrichedAt", "enriched_at"),
    ("companies", "updatedAt", "updated_at"),
)


def _structs(fields: str, lists: str = "") -> str:
    text = ", ".join(f'"{field}" VARCHAR' for field in fields.split())
    more = "".join(f', "{field}" VARCHAR[]' for field in lists.split())
    return f"STRUCT({text}{more})[]"


# Every property the generator writes, as text: what DuckDB reads when it is told them
# (the engine "duckdb-schema-given"). Not the brief's measure: a property no one told it
# of would be dropped. It shows what finding every property costs DuckDB.
GENERATOR_SCHEMA = {
    "companies": _structs("id name domain industry numberOfEmployees country enrichedAt updatedAt"),
    "contacts": _structs("id email firstName lastName companyId jobTitle phone"),
    "deals": _structs("id name amount stage closeDate companyId pipeline", "contactIds"),
}


# --- DuckDB ------------------------------------------------------------------------------


def run_duckdb(path: Path, memory_limit: str = "", schema: dict[str, str] | None = None) -> dict:
    import duckdb

    con = duckdb.connect()
    if memory_limit:  # past it, DuckDB spills what it can to a folder of the system's
        con.execute(f"SET memory_limit = '{memory_limit}'")
        spill = tempfile.mkdtemp(prefix="spike-spill-")
        atexit.register(shutil.rmtree, spill, True)
        con.execute(f"SET temp_directory = '{spill}'")
    con.execute("SET TimeZone = 'UTC'")
    timings = {}
    started = time.perf_counter()
    _duck_read(con, path, schema)
    timings["read"] = time.perf_counter() - started
    started = time.perf_counter()
    domain = "lower(trim(domain))"
    for pattern, replacement in DOMAIN_STEPS:
        domain = f"regexp_replace({domain}, '{pattern}', '{replacement}')"
    # A property holding numbers and text is JSON; its text is ->>'$'.
    json_typed = {
        (name, row[0])
        for name in OBJECTS
        for row in con.execute(f"DESCRIBE props_{name}").fetchall()
        if row[1] == "JSON"
    }

    def text(name: str, field: str) -> str:
        return f"\"{field}\"->>'$'" if (name, field) in json_typed else f'"{field}"'

    con.execute(
        f"""CREATE TABLE companies AS SELECT * EXCLUDE (normalised),
            CASE WHEN regexp_matches(normalised, '{DOMAIN_SHAPE}') THEN normalised END
                AS domain_key,
            {_duck_stamp(text("companies", "enrichedAt"))} AS enriched_at,
            {_duck_stamp(text("companies", "updatedAt"))} AS updated_at
        FROM (SELECT *, {domain} AS normalised FROM props_companies)"""
    )
    con.execute(
        "CREATE TABLE contacts AS SELECT *, lower(trim(email)) AS email_key FROM props_contacts"
    )
    con.execute(
        f"""CREATE TABLE deals AS SELECT *,
            try_cast(regexp_replace({text("deals", "amount")}, '{AMOUNT_NOISE}', '', 'g')
                     AS DECIMAL(18, 2)) AS amount_value,
            {_duck_stamp(text("deals", "closeDate"))} AS close_at
        FROM props_deals"""
    )
    for name in OBJECTS:
        con.execute(f"DROP TABLE props_{name}")
    columns = {
        name: [row[0] for row in con.execute(f"DESCRIBE {name}").fetchall()] for name in OBJECTS
    }
    timings["typed"] = time.perf_counter() - started

    started = time.perf_counter()
    groups = con.execute(
        """SELECT domain_key, list(id ORDER BY idx) FROM companies
        WHERE domain_key IS NOT NULL GROUP BY domain_key HAVING count(*) > 1"""
    ).fetchall()
    timings["dedup"] = time.perf_counter() - started

    started = time.perf_counter()
    queries = [
        f"SELECT '{name}', idx, id, '{field}', {text(name, field)} FROM {name} "
        f"WHERE {text(name, field)} IS NOT NULL AND {typed} IS NULL"
        for name, field, typed in CHECKS
    ]
    failing = con.execute(" UNION ALL ".join(queries)).fetchall()
    timings["validate"] = time.perf_counter() - started
    peak = _peak_mib()

    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        for name in OBJECTS:
            con.execute(f"COPY {name} TO '{folder}/{name}.parquet' (FORMAT parquet, {ZSTD})")
        timings["parquet_write"] = time.perf_counter() - started
        started = time.perf_counter()
        for name in OBJECTS:
            con.execute(
                f"CREATE TABLE again_{name} AS FROM read_parquet('{folder}/{name}.parquet')"
            )
        timings["parquet_read"] = time.perf_counter() - started
        size = sum(p.stat().st_size for p in Path(folder).iterdir())
    return _found(timings, columns, groups, failing, size, peak)


def _duck_read(con, path: Path, schema: dict[str, str] | None) -> None:
    """props_<object>: one table per object, every property a column, `idx` the record's
    position. The document is one object: its size is the largest object read_json must
    hold (a bigger bound is allocated, twice over, under a memory limit)."""
    bound = f"maximum_object_size = {path.stat().st_size + 1}"
    if schema:  # the properties told: read straight into them
        con.execute(
            f"CREATE TEMP TABLE doc AS SELECT * FROM read_json(?, {bound}, columns = ?)",
            [str(path), schema],
        )
        for name in OBJECTS:
            con.execute(
                f"CREATE TEMP TABLE props_{name} AS SELECT generate_subscripts({name}, 1) - 1 "
                f"AS idx, unnest({name}, recursive := true) FROM doc"
            )
        con.execute("DROP TABLE doc")
        return
    # Each list as JSON values, then every record's structure merged over all records
    # (json_group_structure) and applied: read_json's own detection over one 200 MB
    # object takes twice as long again.
    lists = ", ".join(f"{name}: 'JSON[]'" for name in OBJECTS)
    con.execute(
        f"CREATE TEMP TABLE doc AS SELECT * FROM read_json(?, {bound}, columns = {{{lists}}})",
        [str(path)],
    )
    for name in OBJECTS:
        con.execute(
            f"CREATE TEMP TABLE raw_{name} AS SELECT unnest({name}) AS j, "
            f"generate_subscripts({name}, 1) - 1 AS idx FROM doc"
        )
    con.execute("DROP TABLE doc")
    for name in OBJECTS:
        structure = con.execute(f"SELECT json_group_structure(j) FROM raw_{name}").fetchone()[0]
        con.execute(
            f"CREATE TEMP TABLE props_{name} AS SELECT idx, "
            f"unnest(json_transform(j, '{structure}')) FROM raw_{name}"
        )
        con.execute(f"DROP TABLE raw_{name}")


def _duck_stamp(text: str) -> str:
    """A date, a date-time (Z or an offset) or epoch milliseconds, as a UTC timestamp."""
    # One format per call: given a list of formats, try_strptime (DuckDB 2.0.1) takes
    # 2025-02-30 as 2025-03-02, where one format refuses it.
    formats = ("%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%d")
    parsed = ", ".join(f"try_strptime({text}, '{f}')::TIMESTAMPTZ" for f in formats)
    return f"""coalesce({parsed},
        CASE WHEN regexp_matches({text}, '{EPOCH_MS}')
             THEN epoch_ms(try_cast({text} AS BIGINT))::TIMESTAMPTZ END)"""


# --- Polars ------------------------------------------------------------------------------


def run_polars(path: Path, memory_limit: str = "") -> dict:  # noqa: ARG001 (no such knob)
    import polars as pl

    timings = {}
    started = time.perf_counter()
    # The schema from every record (infer_schema_length=None); a property holding numbers
    # and text is read as text, which keeps each value as written.
    doc = pl.read_json(path, infer_schema_length=None)
    props = {name: doc.select(pl.col(name).explode()).unnest(name) for name in OBJECTS}
    del doc
    timings["read"] = time.perf_counter() - started
    started = time.perf_counter()
    domain = pl.col("domain").str.strip_chars().str.to_lowercase()
    for pattern, replacement in DOMAIN_STEPS:
        domain = domain.str.replace(pattern, replacement)
    tables = {
        "companies": props["companies"]
        .with_columns(
            pl.int_range(pl.len()).alias("idx"),
            domain.alias("normalised"),  # once, as DuckDB's subquery does
            _polars_stamp(pl, "enrichedAt").alias("enriched_at"),
            _polars_stamp(pl, "updatedAt").alias("updated_at"),
        )
        .with_columns(
            pl.when(pl.col("normalised").str.contains(DOMAIN_SHAPE))
            .then(pl.col("normalised"))
            .alias("domain_key")
        )
        .drop("normalised"),
        "contacts": props["contacts"].with_columns(
            pl.int_range(pl.len()).alias("idx"),
            pl.col("email").str.strip_chars().str.to_lowercase().alias("email_key"),
        ),
        "deals": props["deals"].with_columns(
            pl.int_range(pl.len()).alias("idx"),
            pl.col("amount")
            .str.replace_all(AMOUNT_NOISE, "")
            .cast(pl.Decimal(18, 2), strict=False)
            .alias("amount_value"),
            _polars_stamp(pl, "closeDate").alias("close_at"),
        ),
    }
    del props
    columns = {name: list(table.columns) for name, table in tables.items()}
    timings["typed"] = time.perf_counter() - started

    started = time.perf_counter()
    groups = (
        tables["companies"]
        .filter(pl.col("domain_key").is_not_null())
        .group_by("domain_key")
        .agg(pl.col("id").sort_by("idx"), pl.len().alias("n"))
        .filter(pl.col("n") > 1)
        .select("domain_key", "id")
        .rows()
    )
    timings["dedup"] = time.perf_counter() - started

    started = time.perf_counter()
    failing = []
    for name, field, typed in CHECKS:
        failing += (
            tables[name]
            .filter(pl.col(field).is_not_null() & pl.col(typed).is_null())
            .select(pl.lit(name), "idx", "id", pl.lit(field).alias("field"), field)
            .rows()
        )
    timings["validate"] = time.perf_counter() - started
    peak = _peak_mib()

    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        for name, table in tables.items():
            table.write_parquet(f"{folder}/{name}.parquet", compression="zstd")
        timings["parquet_write"] = time.perf_counter() - started
        started = time.perf_counter()
        again = {name: pl.read_parquet(f"{folder}/{name}.parquet") for name in OBJECTS}
        timings["parquet_read"] = time.perf_counter() - started
        size = sum(p.stat().st_size for p in Path(folder).iterdir())
    del again
    return _found(timings, columns, groups, failing, size, peak)


def _polars_stamp(pl, field: str):
    text = pl.col(field)
    utc = pl.Datetime("us", "UTC")
    return pl.coalesce(
        text.str.to_datetime("%Y-%m-%dT%H:%M:%S%#z", strict=False, time_zone="UTC"),
        text.str.to_date("%Y-%m-%d", strict=False).cast(utc),
        pl.when(text.str.contains(EPOCH_MS))
        .then(pl.from_epoch(text.cast(pl.Int64, strict=False), time_unit="ms"))
        .dt.replace_time_zone("UTC")
        .cast(utc),
    )


# --- measuring ---------------------------------------------------------------------------


def _peak_mib() -> float:
    """This process's peak RSS so far: the engine's memory is in the process."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _found(
    timings: dict, columns: dict, groups: list, failing: list, parquet: int, peak: float
) -> dict:
    """What a run found, with a digest each engine's must match. `peak`: the peak RSS
    of the brief's measure (read to validate); with the Parquet round trip: `peak_all_mib`."""
    groups = sorted((key, list(ids)) for key, ids in groups)
    failing = sorted(
        (name, int(idx), rid, field, str(value)) for name, idx, rid, field, value in failing
    )
    by_field: dict[str, int] = {}
    for _, _, _, field, _ in failing:
        by_field[field] = by_field.get(field, 0) + 1
    digest = hashlib.sha256(json.dumps([groups, failing]).encode()).hexdigest()[:16]
    return {
        "seconds": timings,
        "columns": columns,
        "groups": len(groups),
        "grouped_records": sum(len(ids) for _, ids in groups),
        "failing": by_field,
        "digest": digest,
        "parquet_mb": parquet / 1e6,
        "peak_mib": peak,
        "peak_all_mib": _peak_mib(),
    }


ENGINES = {
    "duckdb": run_duckdb,
    "polars": run_polars,
    "duckdb-schema-given": partial(run_duckdb, schema=GENERATOR_SCHEMA),
}


def versions(engine: str) -> str:
    module = __import__(engine.split("-")[0])
    return f"{engine} {module.__version__}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--memory-limit", default="", help="DuckDB's memory_limit, e.g. 1GB")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # one run, printed as JSON
    args = parser.parse_args(argv)
    if args.child:
        found = ENGINES[args.child](args.file, args.memory_limit)
        print(json.dumps({**found, "version": versions(args.child)}))
        return 0

    results: dict[str, list[dict]] = {}
    for _ in range(args.repeat):  # interleaved: a load spike on the machine hits both
        for engine in args.engines.split(","):
            command = [sys.executable, __file__, str(args.file), "--child", engine]
            command += ["--memory-limit", args.memory_limit]
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if done.returncode:
                print(f"{engine} failed:\n{done.stderr[-2000:]}", file=sys.stderr)
                return 1
            results.setdefault(engine, []).append(json.loads(done.stdout))
    print(markdown(results))
    digests = {runs[0]["digest"] for runs in results.values()}
    if len(digests) > 1:
        print("\nThe engines found different groups or failing values.")
        return 1
    return 0


STEPS = ("read", "typed", "dedup", "validate")  # the brief's measure
PARQUET = ("parquet_write", "parquet_read")  # parsed once, read by every later step


def _best_median(values: list[float]) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f}"


def markdown(results: dict[str, list[dict]]) -> str:
    """Seconds as best / median over the runs; the peak is the largest."""
    lines = [
        "| engine | " + " | ".join(f"{step} s" for step in STEPS)
        + " | total s | peak RSS MiB | Parquet write s | Parquet read s | Parquet MB "
        "| peak RSS with Parquet MiB |",
        "|---|" + "---:|" * (len(STEPS) + 6),
    ]  # fmt: skip
    for runs in results.values():
        cells = [_best_median([run["seconds"][step] for run in runs]) for step in STEPS]
        cells.append(_best_median([sum(run["seconds"][s] for s in STEPS) for run in runs]))
        cells.append(f"{max(run['peak_mib'] for run in runs):,.0f}")
        cells += [_best_median([run["seconds"][step] for run in runs]) for step in PARQUET]
        cells.append(f"{runs[0]['parquet_mb']:.0f}")
        cells.append(f"{max(run['peak_all_mib'] for run in runs):,.0f}")
        lines.append(f"| {runs[0]['version']} | {' | '.join(cells)} |")
    for engine, runs in results.items():
        first = runs[0]
        lines.append(
            f"\n{engine}: {first['groups']:,} domain groups ({first['grouped_records']:,} "
            f"companies); failing {json.dumps(first['failing'])}; digest {first['digest']}; "
            f"columns {json.dumps(first['columns'])}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
