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

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain, islice
from operator import attrgetter
from typing import Any

import duckdb
import msgspec
import numpy as np

from reviews.engine.batch import Batch
from reviews.engine.extra_fields import CHUNK
from reviews.engine.ingest import records as kinds
from reviews.engine.ingest import values
from reviews.engine.memo import once_each

# Leads: Salesforce's fourth object; an empty table for a batch without any (HubSpot's).
_json = msgspec.json.Encoder()
OBJECTS = ("companies", "contacts", "deals", "leads")
KINDS = {
    "companies": kinds.COMPANIES,
    "contacts": kinds.CONTACTS,
    "deals": kinds.DEALS,
    "leads": kinds.LEADS,
}

# A documented field's column type, by the parser that reads it.
_TYPES = {
    values.parse_datetime: "TIMESTAMPTZ",
    values.parse_date: "DATE",
    values.parse_amount: "DECIMAL(38, 6)",
    values.parse_id_list: "VARCHAR[]",
    values.parse_boolean: "BOOLEAN",
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
    # object -> {column header or API property name: the documented column it filled}
    headers: dict[str, dict[str, str]] = field(default_factory=dict)
    # object -> property names left out because their name folds to a taken one
    left_out: dict[str, list[str]] = field(default_factory=dict)
    # the currency of amounts that name none (Batch.currency; None: DEFAULT_CURRENCY)
    currency: str | None = None
    locked: bool = False  # reads only what it holds from here on (sandbox.lock)

    def columns(self, name: str) -> list[str]:
        return [row[0] for row in self.connection.execute(f'DESCRIBE "{name}"').fetchall()]

    @property
    def aliases(self) -> dict[str, dict[str, str]]:
        """Per object, the names a rule may use for a documented column beyond the
        table's own: its name in the JSON batch (docs/input.md: `closeDate` for
        `close_date`) and each header that filled it, unless the name is a column
        already (DuckDB matches names case-insensitively; the first name wins)."""
        found = {}
        for name in self.headers:  # every object the database holds
            taken = {column.casefold() for column in self.columns(name)}
            names = {key: column for column, key in json_names(name).items()}
            found[name] = {}
            for alias, column in (*names.items(), *self.headers.get(name, {}).items()):
                if alias.casefold() not in taken:
                    taken.add(alias.casefold())
                    found[name][alias] = column
        return found

    def labels(self, name: str) -> dict[str, str]:
        """Documented column -> what the analyst calls it: the first header that filled
        it, else its name in the JSON batch (docs/input.md)."""
        found = json_names(name)
        for header, column in reversed(self.headers.get(name, {}).items()):
            found[column] = header
        return found


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
    # Column by column: one pass over the records per documented field.
    data = {
        column: column_values(records, column, kind)
        for column, kind in typed.items()
        if column not in STAGE_COLUMNS
    }
    if name == "deals":
        data.update(stage_columns(batch, records))
    extras, left_out = _properties(batch, name, records, {c.casefold() for c in typed})
    create_table(tables.connection, name, typed, data, extras)
    tables.left_out[name] = left_out
    tables.headers[name] = _headers(name, batch.field_headers.get(name, {}))


def column_values(records: list, attr: str, kind: str) -> list:
    """One documented field of every record, as DuckDB takes it from an object array:
    text as it is, lists of text, and the ISO text of a Decimal, date or datetime (which
    casts exactly). A parsed batch's text is storable already (ingest/safe_text.py)."""
    values = map(attrgetter(attr), records)
    if kind == "VARCHAR":
        return list(values)
    if kind == "VARCHAR[]":
        return [list(v) if v else [] for v in values]
    return once_each(str, values)


def stage_columns(batch: Batch, deals: list) -> dict[str, list]:
    stages = [batch.stage_of(deal) for deal in deals]
    return {
        "stage_id": [s.id if s else None for s in stages],
        "stage_label": [(s.label or s.id) if s else None for s in stages],
        "is_closed": [s.closed if s else None for s in stages],
        "is_won": [s.won if s else None for s in stages],
    }


def _properties(batch: Batch, name: str, records: list, taken: set[str]) -> tuple[dict, list]:
    """Every other property, a column each: ({name: values}, names left out). The
    export's columns come first in its order, blank ones too; then any a record adds."""
    extras: dict[str, list] = {}
    left_out: list[str] = []
    for key in batch.property_names.get(name, ()):
        if key.casefold() in taken:
            left_out.append(key)
        else:
            taken.add(key.casefold())
            extras[key] = []
    rows = 0
    # A chunk of records at a time, a column at a time: a loop per record and property
    # took 1.45 s of a million records' 5 s build, this 0.96 s.
    for chunk in _extras(batch, name, records):
        # Each property the chunk names, in the order it first comes.
        for key in dict.fromkeys(chain.from_iterable(chunk)):
            if key in extras:
                continue
            if key.casefold() in taken:
                left_out.append(key)
                continue
            taken.add(key.casefold())
            extras[key] = [None] * rows
        for key, column in extras.items():
            column.extend(_texts([fields.get(key) for fields in chunk]))
        rows += len(chunk)
    return extras, sorted(set(left_out))


def _texts(values: list[Any]) -> list[str | None]:
    """property_text of each value; text and None as they are, without a call."""
    return [v if v is None or v.__class__ is str else property_text(v) for v in values]


def _extras(batch: Batch, name: str, records: list) -> Iterator[list[Mapping[str, Any]]]:
    """The records' unread fields in row order, extra_fields.CHUNK records at a time:
    decoded a chunk in one call where the batch keeps them for the whole list, by record
    index (the JSON reader's)."""
    kept = batch.extras.get(name)
    if kept is not None and all(r.index == row and not r.extra for row, r in enumerate(records)):
        return kept.chunks(len(records))
    fields = map(batch.extra_of, records)
    return iter(lambda: list(islice(fields, CHUNK)), [])


def create_table(connection, name: str, typed: dict, data: dict, extras: dict) -> None:
    rows = {column: _array(data[column]) for column in typed}
    for index, column in enumerate(extras.values()):
        rows[f"_p{index}"] = _array(column)
    selects = [f'CAST("{c}" AS {t}) AS "{c}"' for c, t in typed.items()]
    selects += [f'CAST("_p{i}" AS VARCHAR) AS {quote(key)}' for i, key in enumerate(extras)]
    # DuckDB reads the dict of arrays named in FROM from this frame (a replacement scan).
    _rows = rows  # noqa: F841
    # Every name in `selects` is quoted (quote); none is the user's SQL.
    connection.execute(f'CREATE TABLE "{name}" AS SELECT {", ".join(selects)} FROM _rows')  # noqa: S608


def _array(column: list | np.ndarray) -> np.ndarray:
    """An object array, one item per record (lists stay items, not a second axis); a
    typed array as it is (row numbers: DuckDB reads int64 in C, Python ints one by one)."""
    if column.__class__ is np.ndarray:
        return column
    return np.fromiter(column, dtype=object, count=len(column))


def _headers(name: str, headers: Mapping[str, str]) -> dict[str, str]:
    """Each header that filled a documented field, to that field's column."""
    columns = {key: column for column, key in json_names(name).items()}
    return {header: columns[key] for header, key in headers.items() if key in columns}


def property_text(value: Any) -> str | None:
    """A property's value as text: strings as given, other JSON values as JSON."""
    if value is None:
        return None
    if value.__class__ is str:
        return value  # storable: a parsed batch's text is (ingest/safe_text.py)
    # msgspec, as the batch's kept fields (extra_fields.py): ints past 64 bits too.
    try:
        return _json.encode(value).decode()
    except ValueError:  # an int past Python's 4,300-digit str() limit, nested somewhere
        return None


def quote(name: str) -> str:
    """A column name as a SQL identifier."""
    return '"' + name.replace('"', '""') + '"'
