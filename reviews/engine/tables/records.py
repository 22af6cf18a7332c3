"""The parsed batch read back from its tables, so that nothing parses an upload twice.

A batch's tables (build.py) hold every documented field as a typed column and every
other property as text. What they cannot say exactly is kept beside them, per object,
row for row with its table:

- `<object>.records.parquet`: each record's `index`, its position in its list (what
  `companies[3]` names), and a deal's `amount` as its own decimal text (DECIMAL(38, 6)
  reads 410000.00 back as 410000.000000: equal, not the same text);
- `<object>.extras` and `.extras.npy`: the record's fields no rule reads, as the JSON
  text the batch kept them in (extra_fields.py) and where each one ends, so a property
  column's "123" and 123 stay apart.

One thing is not told apart: an empty `companyIds` given ([]) reads back as none given
(()); both are empty to every reader and to the cache key.

The rest of the Batch (as-of, pipelines, value problems, headers...) is one JSON
object in the tables' META (`batch_meta`). `read_batch` gives back a Batch equal to
the one parsed, field for field (tests/engine/test_tables_records.py), for about two
thirds of a parse's CPU (bench/README.md, "The tables, built once per batch").

A batch whose kept fields would not read back as they were (a NaN, a number of
thousands of digits: only the JSON reader's standard-library path makes those) is
written without its records; it is parsed again when it is read."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from itertools import accumulate, repeat
from pathlib import Path
from typing import Any

import duckdb
import msgspec
import numpy as np

from reviews.engine.batch import Batch, Pipeline, Stage, ValueProblem
from reviews.engine.extra_fields import NO_EXTRA, ExtraFields
from reviews.engine.memo import once_each
from reviews.engine.tables.build import KINDS, OBJECTS, create_table, typed_columns

_encode = msgspec.json.Encoder().encode  # insertion order: a CSV's columns stay in order
_decode = msgspec.json.Decoder().decode
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_DAY = date(1970, 1, 1)
_TYPES = {"index": "BIGINT", "amount": "VARCHAR"}  # the records files' columns


def records_file(folder: Path, name: str) -> Path:
    return folder / f"{name}.records.parquet"


def _extras_files(folder: Path, name: str) -> tuple[Path, Path]:
    return folder / f"{name}.extras", folder / f"{name}.extras.npy"


# --- writing ------------------------------------------------------------------------------


def write_records(batch: Batch, folder: Path) -> dict | None:
    """Write each object's records and kept fields into `folder`; the batch's meta for
    the tables' META, or None if its kept fields would not read back as they are (what
    was written is then never read: the META says there is no batch)."""
    connection = duckdb.connect(":memory:")
    for name in OBJECTS:
        records = getattr(batch, name)
        extras = _extras(batch, name, records)
        if extras is None:
            return None
        text, ends = extras
        kept, ends_file = _extras_files(folder, name)
        kept.write_bytes(text)
        np.save(ends_file, np.array(ends, dtype=np.int64))
        data = {"index": [r.index for r in records]}
        if name == "deals":
            data["amount"] = [None if r.amount is None else str(r.amount) for r in records]
        types = {column: _TYPES[column] for column in data}
        create_table(connection, name, types, data, {})
        connection.table(name).write_parquet(str(records_file(folder, name)))
    return batch_meta(batch)


def _extras(batch: Batch, name: str, records: list) -> tuple[bytes, list[int]] | None:
    """The object's kept fields as one text and each one's end in it: the batch's own
    ExtraFields as they are (by record index), or each record's own fields, in row order."""
    kept = batch.extras.get(name)
    if kept is not None:
        return kept.dump()
    texts = [_own_extra(r.extra) for r in records]
    if any(text is None for text in texts):
        return None
    return b"".join(texts), list(accumulate(map(len, texts)))


def _own_extra(fields: Mapping) -> bytes | None:
    """A record's own kept fields as JSON text, or None if the text would not read back
    as the same values (NaN, or a Decimal the standard library made of a huge number)."""
    if not fields:
        return b""
    try:
        text = _encode(fields)
    except (TypeError, ValueError, OverflowError):
        return None
    return text if _decode(text) == fields else None


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
    shared: dict[str, str] = {}  # a company's id -> its string
    for name in OBJECTS:
        text_file, ends_file = _extras_files(folder, name)
        text, ends = text_file.read_bytes(), np.load(ends_file).tolist()
        if name in meta["kept_extras"]:
            batch.extras[name] = ExtraFields.load(text, ends)
            extras: Iterable = repeat(NO_EXTRA)
        else:
            extras = map(_decode_extra, repeat(text), [0, *ends[:-1]], ends)
        records = _read_records(connection, folder, name, extras, shared)
        if name == "companies":
            shared = {record.id: record.id for record in records}
        setattr(batch, name, records)
    return batch


def _decode_extra(text: bytes, start: int, end: int) -> dict:
    return _decode(text[start:end]) if end > start else {}


def _read_records(
    connection: duckdb.DuckDBPyConnection,
    folder: Path,
    name: str,
    extras: Iterable,
    shared: dict[str, str],
) -> list:
    kind = KINDS[name]
    typed = typed_columns(name)
    own = ("index", "extra", "amount") if name == "deals" else ("index", "extra")
    theirs = [column for column in kind.make.__slots__ if column not in own]
    lists = [column for column in theirs if typed[column] == "VARCHAR[]"]
    scalars = [column for column in theirs if column not in lists]
    table = folder / f"{name}.parquet"
    # Scans in file order, row for row: both files were written from the same list.
    selects = ", ".join(_select(c, typed[c]) for c in scalars)
    found = connection.read_parquet(str(table)).project(selects).fetchnumpy()
    found.update(connection.read_parquet(str(records_file(folder, name))).fetchnumpy())
    for column in lists:
        found[column] = _id_lists(connection, table, column)
    columns = []
    for column in kind.make.__slots__:
        if column == "extra":
            columns.append(extras)
            continue
        values = found[column]
        convert = _CONVERT.get((name, column)) or _BY_TYPE.get(typed.get(column))
        values = convert(values) if convert else values.tolist()  # NULLs come back None
        if column == "company_id":  # one string per company id, as the parse shares it
            values = list(map(shared.get, values, values))
        columns.append(values)
    return list(map(kind.make, *columns))


def _select(column: str, kind: str) -> str:
    """A typed column as Python reads it fastest: moments as whole numbers (converted
    once per distinct value: _distinct)."""
    if kind == "TIMESTAMPTZ":
        return f'epoch_us("{column}") AS "{column}"'
    if kind == "DATE":
        return f'("{column}" - DATE \'1970-01-01\') AS "{column}"'
    return f'"{column}"'


def _id_lists(connection, table: Path, column: str) -> list:
    """A list column as lists, an empty one as None (cheaper to fetch): the field's
    default is given in _CONVERT and _BY_TYPE."""
    rows = (
        connection.read_parquet(str(table))
        .project(f'CASE WHEN len("{column}") > 0 THEN "{column}" END')
        .fetchall()
    )
    return [row[0] for row in rows]


def _distinct(convert: Callable[[int], Any]) -> Callable[[np.ndarray], list]:
    """Values repeat (a few thousand dates in a million records): each distinct one is
    converted once and shared, as the parse shares them (numbers: sorted in C)."""

    def column(values: np.ndarray) -> list:
        missing = np.ma.getmaskarray(values)
        distinct, where = np.unique(np.ma.filled(values, 0), return_inverse=True)
        converted = np.empty(len(distinct) + 1, dtype=object)
        converted[:-1] = [convert(value) for value in distinct.tolist()]
        where[missing] = len(distinct)  # the last: None
        return converted[where].tolist()

    return column


_BY_TYPE: dict[str | None, Callable[[Any], list]] = {
    "TIMESTAMPTZ": _distinct(lambda us: _EPOCH + timedelta(microseconds=us)),
    "DATE": _distinct(lambda days: _EPOCH_DAY + timedelta(days=days)),
    "VARCHAR[]": lambda values: [ids or () for ids in values],  # company_ids' default
}
_CONVERT: dict[tuple[str, str], Callable[[Any], list]] = {
    ("deals", "amount"): lambda values: once_each(Decimal, values.tolist()),
    ("deals", "contact_ids"): lambda values: [ids or [] for ids in values],
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
