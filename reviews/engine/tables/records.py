"""The parsed batch read back from its tables, so that nothing parses an upload twice.

A batch's tables (build.py) hold every documented field as a typed column and every
other property as text. Three things they cannot say exactly are kept beside them,
one small Parquet file per object (`<object>.records.parquet`), row for row:

- `index`: the record's position in its list (what `companies[3]` names);
- `extra`: the record's fields no rule reads, as the JSON text the batch kept them in
  (extra_fields.py), so a property column's "123" and 123 stay apart;
- `amount` (deals): the amount's own decimal text: DECIMAL(38, 6) reads 410000.00
  back as 410000.000000, equal but not the same text.

The rest of the Batch (as-of, pipelines, value problems, headers...) is one JSON
object in the tables' META (`batch_meta`). `read_batch` gives back a Batch equal to
the one parsed, field for field (tests/engine/test_tables_records.py), in a fraction
of the parse's time (bench/README.md, "The batch read back from its tables").

A batch whose kept fields would not read back as they were (a NaN, a number past
64 bits read by the standard library: only the JSON reader's slow path makes those)
is written without its records; it is parsed again when it is read."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from itertools import repeat
from pathlib import Path
from typing import Any

import duckdb
import msgspec
import numpy as np

from reviews.engine.batch import Batch, Pipeline, Stage, ValueProblem
from reviews.engine.extra_fields import NO_EXTRA, ExtraFields
from reviews.engine.tables.build import KINDS, OBJECTS, typed_columns

_encode = msgspec.json.Encoder().encode  # insertion order: a CSV's columns stay in order
_decode = msgspec.json.Decoder().decode
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_DAY = date(1970, 1, 1)


def records_file(folder: Path, name: str) -> Path:
    return folder / f"{name}.records.parquet"


# --- writing ------------------------------------------------------------------------------


def write_records(batch: Batch, folder: Path) -> dict | None:
    """Write each object's records file into `folder`; the batch's meta for the tables'
    META, or None (nothing written) if its kept fields would not read back as they are."""
    columns = {}
    for name in OBJECTS:
        found = _record_columns(batch, name)
        if found is None:
            return None
        columns[name] = found
    connection = duckdb.connect(":memory:")
    for name, data in columns.items():
        _write(connection, data, records_file(folder, name))
    return batch_meta(batch)


def _record_columns(batch: Batch, name: str) -> dict[str, list] | None:
    records = getattr(batch, name)
    kept = batch.extras.get(name)
    if kept is not None:
        extra = [kept.json(r.index) for r in records]
    else:
        extra = [_own_extra(r.extra) for r in records]
        if any(text is None for text in extra):
            return None
    data: dict[str, list] = {
        "index": [r.index for r in records],
        "extra": [None if text in (b"", b"{}") else text for text in extra],
    }
    if name == "deals":
        data["amount"] = [None if r.amount is None else str(r.amount) for r in records]
    return data


def _own_extra(fields: dict) -> bytes | None:
    """A record's own kept fields as JSON text, or None if the text would not read back
    as the same values (NaN, or a Decimal the standard library made of a huge number)."""
    if not fields:
        return b""
    try:
        text = _encode(fields)
    except (TypeError, ValueError, OverflowError):
        return None
    return text if _decode(text) == fields else None


def _write(connection: duckdb.DuckDBPyConnection, data: dict[str, list], path: Path) -> None:
    types = {"index": "BIGINT", "extra": "BLOB", "amount": "VARCHAR"}
    _rows = {column: np.array(values, dtype=object) for column, values in data.items()}  # noqa: F841
    selects = ", ".join(f'CAST("{c}" AS {types[c]}) AS "{c}"' for c in data)
    # The names are our own (types above), never the batch's.
    connection.execute(f"COPY (SELECT {selects} FROM _rows) TO '{path}' (FORMAT parquet)")  # noqa: S608


def batch_meta(batch: Batch) -> dict:
    """What the Batch holds beside its records, as JSON data (read back by batch_from_meta)."""
    return {
        "id": batch.id,
        "as_of": batch.as_of.isoformat(),
        "source": batch.source,
        "pipelines": [_pipeline_data(p) for p in batch.pipelines.values()],
        "value_problems": [dataclasses.astuple(p) for p in batch.value_problems],
        "partial": batch.partial,
        "ignored_columns": batch.ignored_columns,
        "warnings": batch.warnings,
        "exported_fields": {k: sorted(v) for k, v in batch.exported_fields.items()},
        "as_of_source": batch.as_of_source,
        "currency": batch.currency,
        "unresolved_company_names": batch.unresolved_company_names,
        "dataset": batch.dataset,
        "observed_stages": [
            [pipeline, stage, _stage_data(state)]
            for (pipeline, stage), state in batch.observed_stages.items()
        ],
        "uploaded_pipelines": [_pipeline_data(p) for p in batch.uploaded_pipelines],
        "field_headers": batch.field_headers,
        "property_names": batch.property_names,
        "kept_extras": sorted(batch.extras),
    }


def _pipeline_data(pipeline: Pipeline) -> dict:
    return {
        "id": pipeline.id,
        "label": pipeline.label,
        "source": pipeline.source,
        "stages": [_stage_data(stage) for stage in pipeline.stages],
    }


def _stage_data(stage: Stage) -> dict:
    return {
        "id": stage.id,
        "label": stage.label,
        "closed": stage.closed,
        "won": stage.won,
        "aliases": list(stage.aliases),
        "probability": stage.probability,
    }


# --- reading ------------------------------------------------------------------------------


def read_batch(folder: Path, meta: dict) -> Batch:
    """The Batch kept in `folder` (its tables and records files; `meta` its META's
    "batch"), equal to the one that was parsed."""
    batch = batch_from_meta(meta)
    connection = duckdb.connect(":memory:")
    company_ids: dict[str, str] = {}
    for name in OBJECTS:
        path = records_file(folder, name)
        table = folder / f"{name}.parquet"
        records, kept = _read_object(connection, name, table, path, name in meta["kept_extras"])
        if name == "companies":
            company_ids = {record.id: record.id for record in records}
        elif company_ids and name in ("contacts", "deals"):
            for record in records:  # one string per company id, as the parse shares it
                if record.company_id:
                    record.company_id = company_ids.get(record.company_id, record.company_id)
        setattr(batch, name, records)
        if kept is not None:
            batch.extras[name] = kept
    return batch


def _read_object(
    connection: duckdb.DuckDBPyConnection, name: str, table: Path, path: Path, kept: bool
) -> tuple[list, ExtraFields | None]:
    kind = KINDS[name]
    typed = typed_columns(name)
    own = ["index", "extra", "amount"] if name == "deals" else ["index", "extra"]
    # Two scans in file order, row for row: both files were written from the same list.
    theirs = [column for column in kind.make.__slots__ if column not in own]
    found = connection.execute(
        f"SELECT {', '.join(_select(c, typed[c]) for c in theirs)} "  # noqa: S608 (our names)
        f"FROM read_parquet('{table}')"
    ).fetchnumpy()
    found.update(connection.execute(f"SELECT * FROM read_parquet('{path}')").fetchnumpy())  # noqa: S608
    columns = []
    extra_texts: list = []
    for column in kind.make.__slots__:
        values = found[column].tolist()  # NULLs come back None
        if column == "extra":
            extra_texts = values
            columns.append(repeat(NO_EXTRA) if kept else map(_extra_dict, values))
            continue
        convert = _CONVERT.get((name, column)) or _BY_TYPE.get(typed.get(column))
        columns.append(convert(values) if convert else values)
    records = list(map(kind.make, *columns))
    return records, (ExtraFields.from_json(extra_texts) if kept else None)


def _select(column: str, kind: str) -> str:
    """A typed column as Python reads it fastest: moments as whole numbers, converted
    once per distinct value (_memo)."""
    if kind == "TIMESTAMPTZ":
        return f'epoch_us("{column}") AS "{column}"'
    if kind == "DATE":
        return f'("{column}" - DATE \'1970-01-01\') AS "{column}"'
    return f'"{column}"'


def _extra_dict(text: bytes | None) -> dict:
    return _decode(text) if text else {}


def _memo(convert: Callable[[Any], Any]) -> Callable[[list], list]:
    """Values repeat (a few thousand dates in a million records): each distinct one is
    converted once and shared, as the parse shares them."""

    def column(values: list) -> list:
        seen: dict = {None: None}

        def once(value: Any) -> Any:
            try:
                return seen[value]
            except KeyError:
                found = seen[value] = convert(value)
                return found

        return list(map(once, values))

    return column


def _company_ids(values: list) -> list:
    """Contact's and Deal's `company_ids`: the field's default () when none."""
    return [v.tolist() if v is not None and len(v) else () for v in values]


def _lists(values: list) -> list:
    return [v.tolist() if v is not None else [] for v in values]


_BY_TYPE: dict[str | None, Callable[[list], list]] = {
    "TIMESTAMPTZ": _memo(lambda us: _EPOCH + timedelta(microseconds=us)),
    "DATE": _memo(lambda days: _EPOCH_DAY + timedelta(days=days)),
    "VARCHAR[]": _company_ids,
}
_CONVERT: dict[tuple[str, str], Callable[[list], list]] = {
    ("deals", "amount"): _memo(Decimal),
    ("deals", "contact_ids"): _lists,
}


def batch_from_meta(meta: dict) -> Batch:
    return Batch(
        id=meta["id"],
        as_of=datetime.fromisoformat(meta["as_of"]),
        source=meta["source"],
        companies=[],
        contacts=[],
        deals=[],
        pipelines={p["id"]: _pipeline(p) for p in meta["pipelines"]},
        value_problems=[ValueProblem(*fields) for fields in meta["value_problems"]],
        partial=meta["partial"],
        ignored_columns=meta["ignored_columns"],
        warnings=meta["warnings"],
        exported_fields={k: frozenset(v) for k, v in meta["exported_fields"].items()},
        as_of_source=meta["as_of_source"],
        currency=meta["currency"],
        unresolved_company_names=meta["unresolved_company_names"],
        dataset=meta["dataset"],
        observed_stages={
            (pipeline, stage): _stage(state) for pipeline, stage, state in meta["observed_stages"]
        },
        uploaded_pipelines=[_pipeline(p) for p in meta["uploaded_pipelines"]],
        field_headers=meta["field_headers"],
        property_names=meta["property_names"],
    )


def _pipeline(data: dict) -> Pipeline:
    stages = [_stage(stage) for stage in data["stages"]]
    return Pipeline(id=data["id"], stages=stages, label=data["label"], source=data["source"])


def _stage(data: dict) -> Stage:
    return Stage(**{**data, "aliases": tuple(data["aliases"])})
