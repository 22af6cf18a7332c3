"""A parsed batch as DuckDB tables: one per object, every property the export gave.

Each table has the documented fields as typed columns (their names: the record's
attributes, `close_date`, `company_id`, derived from the field tables of
reviews.engine.ingest.records, so the two cannot disagree), deals the state of their
stage (`stage_id`, `stage_label`, `is_closed`, `is_won`), then every other property as
text under the name the export or API gave it. A column header that filled a documented
field ("Deal Stage", `dealstage`) names that field's column too, so a team's rule may
use either name. DuckDB matches names case-insensitively: a property whose name folds to
one already taken is left out and listed in `Tables.left_out`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np
import orjson

from reviews.engine.batch import Batch
from reviews.engine.ingest import records as kinds
from reviews.engine.ingest import values

OBJECTS = ("companies", "contacts", "deals")
KINDS = {"companies": kinds.COMPANIES, "contacts": kinds.CONTACTS, "deals": kinds.DEALS}

# A documented field's column type, by the parser that reads it.
_TYPES = {
    values.parse_datetime: "TIMESTAMPTZ",
    values.parse_date: "DATE",
    values.parse_amount: "DECIMAL(38, 6)",
    values.parse_id_list: "VARCHAR[]",
}
# Deals also carry their stage's state, resolved the way every rule resolves it.
STAGE_COLUMNS = {
    "stage_id": "VARCHAR",
    "stage_label": "VARCHAR",
    "is_closed": "BOOLEAN",
    "is_won": "BOOLEAN",
}


def typed_columns(name: str) -> dict[str, str]:
    """The documented columns of object `name`, with their DuckDB types, in order."""
    columns = {"id": "VARCHAR"}
    for spec in KINDS[name].fields:
        columns[spec.attr] = _TYPES.get(spec.parse, "VARCHAR")
    if name == "deals":
        columns.update(STAGE_COLUMNS)
    return columns


def json_names(name: str) -> dict[str, str]:
    """Column name -> the field's name in the JSON batch (docs/input.md)."""
    return {"id": "id", **{spec.attr: spec.key for spec in KINDS[name].fields}}


@dataclass
class Tables:
    """An in-memory DuckDB database holding the batch's tables."""

    connection: duckdb.DuckDBPyConnection
    # object -> {name a rule may use: the column it reads}, beyond the table's own
    aliases: dict[str, dict[str, str]] = field(default_factory=dict)
    # object -> property names left out because their name folds to a taken one
    left_out: dict[str, list[str]] = field(default_factory=dict)
    # the currency of amounts that name none (Batch.currency; None: DEFAULT_CURRENCY)
    currency: str | None = None

    def columns(self, name: str) -> list[str]:
        return [row[0] for row in self.connection.execute(f'DESCRIBE "{name}"').fetchall()]


def build_tables(batch: Batch) -> Tables:
    """The batch's records as DuckDB tables in a new in-memory database."""
    connection = duckdb.connect(":memory:")
    tables = Tables(connection, currency=batch.currency)
    for name in OBJECTS:
        load_object(tables, name, batch)
    return tables


def load_object(tables: Tables, name: str, batch: Batch) -> None:
    records = getattr(batch, name)
    typed = typed_columns(name)
    data: dict[str, list] = {column: [] for column in typed}
    extras: dict[str, list] = {}
    taken = {column.casefold() for column in typed}
    left_out: list[str] = []
    for row, record in enumerate(records):
        for column in typed:
            if column not in STAGE_COLUMNS:
                data[column].append(_typed(getattr(record, column)))
        if name == "deals":
            stage = batch.stage_of(record)
            data["stage_id"].append(stage.id if stage else None)
            data["stage_label"].append((stage.label or stage.id) if stage else None)
            data["is_closed"].append(stage.closed if stage else None)
            data["is_won"].append(stage.won if stage else None)
        for key, value in batch.extra_of(record).items():
            column = extras.get(key)
            if column is None:
                if key.casefold() in taken:
                    left_out.append(key)
                    continue
                taken.add(key.casefold())
                column = extras[key] = [None] * row
            column.append(property_text(value))
        for column in extras.values():  # a property this record lacks
            if len(column) <= row:
                column.append(None)
    _create(tables.connection, name, typed, data, extras)
    tables.left_out[name] = sorted(set(left_out))
    tables.aliases[name] = _aliases(name, batch.field_headers.get(name, {}), taken)


def _create(connection, name: str, typed: dict, data: dict, extras: dict) -> None:
    rows = {column: _array(data[column]) for column in typed}
    for index, column in enumerate(extras.values()):
        rows[f"_p{index}"] = _array(column)
    selects = [f'CAST("{c}" AS {t}) AS "{c}"' for c, t in typed.items()]
    selects += [f'CAST("_p{i}" AS VARCHAR) AS {quote(key)}' for i, key in enumerate(extras)]
    # DuckDB reads the dict of arrays named in FROM from this frame (a replacement scan).
    _rows = rows  # noqa: F841
    # Every name in `selects` is quoted (quote); none is the user's SQL.
    connection.execute(f'CREATE TABLE "{name}" AS SELECT {", ".join(selects)} FROM _rows')  # noqa: S608


def _array(column: list) -> np.ndarray:
    """An object array, one item per record (lists stay items, not a second axis)."""
    return np.fromiter(column, dtype=object, count=len(column))


def _aliases(name: str, headers: Mapping[str, str], taken: set[str]) -> dict[str, str]:
    """Each header that filled a documented field, to that field's column (if its name
    is not a column already)."""
    attrs = {key: column for column, key in json_names(name).items()}
    found = {}
    for header, key in headers.items():
        column = attrs.get(key)
        if column and header.casefold() not in taken:
            found[header] = column
    return found


def _typed(value: Any) -> Any:
    """A record's attribute as DuckDB takes it from an object array: text for the rest."""
    if value is None or value.__class__ in (str, bool):
        return values_text(value) if value.__class__ is str else value
    if isinstance(value, (list, tuple)):
        return [values_text(str(v)) for v in value]
    return str(value)  # Decimal, date, datetime: their ISO text casts exactly


def property_text(value: Any) -> str | None:
    """A property's value as text: strings as given, other JSON values as JSON."""
    if value is None:
        return None
    if value.__class__ is str:
        return values_text(value)
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def values_text(text: str) -> str:
    """Text DuckDB can hold: lone surrogates (JSON's \\ud800) become U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


_SURROGATE = re.compile("[\ud800-\udfff]")


def quote(name: str) -> str:
    """A column name as a SQL identifier."""
    return '"' + name.replace('"', '""') + '"'
