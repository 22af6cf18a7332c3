"""Tables kept as Parquet: one file per object and a small JSON of what the files cannot
say (the headers that filled documented fields, the properties left out). Written once
per batch into a folder of its own, through a temporary folder renamed at the end, so a
reader never sees half."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import duckdb

from reviews.engine.batch import Batch
from reviews.engine.tables.build import OBJECTS, Tables, typed_columns
from reviews.engine.tables.records import read_batch, write_records

META = "tables.json"


def write_parquet(tables: Tables, folder: Path, batch: Batch | None = None) -> None:
    """Keep `tables` in `folder` (created; left as it is if another writer won); with
    the `batch` they were built from, its records too, to be read back without a parse
    (records.py)."""

    def fill(work: Path) -> None:
        for name in OBJECTS:
            tables.connection.table(name).write_parquet(str(work / f"{name}.parquet"))
        meta = {
            "headers": tables.headers,
            "left_out": tables.left_out,
            "currency": tables.currency,
            "batch": write_records(batch, work) if batch is not None else None,
        }
        (work / META).write_text(json.dumps(meta))

    write_folder(folder, fill)


def write_folder(folder: Path, fill: Callable[[Path], None]) -> None:
    """Make `folder` whole or not at all: `fill` writes a temporary folder beside it,
    renamed to `folder` at the end (left as it is if another writer won)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}-"))
    try:
        fill(work)
        try:
            os.rename(work, folder)
        except OSError:  # written meanwhile by another process: theirs stands
            if not (folder / META).exists():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def read_parquet(folder: Path, *, load: bool = True) -> Tables | None:
    """The tables kept in `folder`, loaded into a new in-memory database (or, with
    `load` False, as views that read only the columns a query names: not for a locked
    database, which may read no file); None if the folder holds none."""
    if not (folder / META).exists():
        return None
    meta = json.loads((folder / META).read_text())
    connection = duckdb.connect(":memory:")
    for name in OBJECTS:
        path = folder / f"{name}.parquet"
        if path.exists():
            relation = connection.read_parquet(str(path))
            relation.create(name) if load else relation.create_view(name)
        else:  # kept before the object was read (leads): an empty table of its columns
            columns = ", ".join(f'"{c}" {t}' for c, t in typed_columns(name).items())
            connection.execute(f'CREATE TABLE "{name}" ({columns})')
    return Tables(
        connection,
        headers=meta["headers"],
        left_out=meta["left_out"],
        currency=meta.get("currency"),
    )


def read_parsed(folder: Path) -> Batch | None:
    """The parsed batch kept with the tables in `folder`, or None: no tables there, or
    kept without their records (before records were kept, or not writable: records.py)."""
    if not (folder / META).exists():
        return None
    meta = json.loads((folder / META).read_text()).get("batch")
    return read_batch(folder, meta) if meta else None
