"""Write a run's findings in one pass, by the fastest path the database offers:
COPY on Postgres (psycopg 3), executemany in the caller's transaction on SQLite.

A findings-heavy run has 180k findings; the ORM's bulk_create spent ~30 s building and
inserting them. Here each row is a list of column values built straight from the
coordinator's RawFinding, once.

The column list is the Finding model's concrete fields, so a column added to the model
is written too: its value is the history mark's attribute of the same name (fingerprint,
status, first_seen: reviews.engine.history.compare.Marked), else the RawFinding's, else the
field's default."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from decimal import ROUND_HALF_EVEN, Decimal
from itertools import repeat
from operator import attrgetter
from typing import Any

import orjson
from django.db import connection, models
from psycopg import sql

from reviews.engine.findings import MIXED, RawFinding
from reviews.engine.history.compare import Marked
from reviews.engine.storable import is_storable, storable, storable_tree
from reviews.models import Finding

MARK_FIELDS = ("fingerprint", "status", "first_seen")
# What a DecimalField(18, 2) holds: a sum past it is stored capped rather than the
# review failing on an overflow.
MAX_STORED_AMOUNT = Decimal("9999999999999999.99")
# Its two decimals: an amount with more (a currency with three minor digits, BHD 12.345)
# is rounded here, half to even as reviews.engine.money writes cents, the same on every
# database (Postgres's COPY would round half up, Django's SQLite write half to even).
# Widening the column is a rewrite of the largest table (docs/output.md#fields).
STORED_PLACES = Decimal("0.01")


def write_findings(
    run_id: int, findings: Sequence[RawFinding], marks: Sequence[Marked] | None = None
) -> int:
    """Insert `findings` as the Finding rows of run `run_id`, in order (position 0..n-1),
    with their dataset-history marks (marks[i] for findings[i]) when given. Call inside
    a transaction; returns the number of rows.

    Written CHUNK findings at a time (one COPY on Postgres, fed chunk by chunk): a
    chunk's cells are built, checked and sent, then let go, so the cost in memory is a
    chunk's, not a run's."""
    if not findings:
        return 0
    columns = [f for f in Finding._meta.concrete_fields if not f.primary_key]
    names = [field.column for field in columns]
    with _writer(Finding._meta.db_table, names) as write:
        for start in range(0, len(findings), CHUNK):
            part = findings[start : start + CHUNK]
            part_marks = None if marks is None else marks[start : start + CHUNK]
            # Built a column at a time (map over the findings, mostly in C), then zipped
            # into rows: a call per cell through a getter was a third of the write.
            values = [_column(field, run_id, part, part_marks, start) for field in columns]
            write(zip(*values, strict=True))
    return len(findings)


# Rows per chunk: big enough that a chunk's per-column checks run in C over long
# strings, small enough that a chunk's cells are a few MB.
CHUNK = 5_000


@contextmanager
def _writer(table: str, names: list[str]) -> Iterator[Callable[[Iterable[tuple]], None]]:
    """A function that writes rows, by the fastest path the database offers."""
    if connection.vendor == "postgresql":
        statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
            sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, names))
        )
        with connection.cursor() as cursor, cursor.cursor.copy(statement) as copy:
            write_row = copy.write_row

            def copy_rows(rows: Iterable[tuple]) -> None:
                for row in rows:
                    write_row(row)

            yield copy_rows
        return
    quote = connection.ops.quote_name
    # Names come from the model's own fields, never from input.
    columns = ", ".join(map(quote, names))
    marks = ", ".join(["%s"] * len(names))
    statement = f"INSERT INTO {quote(table)} ({columns}) VALUES ({marks})"  # noqa: S608
    with connection.cursor() as cursor:
        yield lambda rows: cursor.executemany(statement, rows)


# --- one column at a time --------------------------------------------------------------


def _column(
    field: models.Field,
    run_id: int,
    findings: Sequence[RawFinding],
    marks: Sequence[Marked] | None,
    start: int,
) -> Iterable[Any]:
    """The values of one column for every finding of a chunk (at `start`), in order."""
    name = field.name
    if name in MARK_FIELDS and marks is not None:
        values = map(attrgetter(name), marks)
        if isinstance(field, models.CharField):  # fingerprint, status: already strings
            return values
        return map(_prepared(field), values)
    if name == "run":
        return repeat(run_id, len(findings))
    if name == "position":
        return range(start, start + len(findings))
    if name == "amount_at_risk":
        return map(_amount, findings)
    if not hasattr(RawFinding, name):
        # A column RawFinding does not carry (added by another feature): its default,
        # prepared for this database once.
        return repeat(field.get_db_prep_save(field.get_default(), connection), len(findings))
    raw = map(attrgetter(name), findings)
    if isinstance(field, models.JSONField):
        return _jsons(list(raw), field)
    if isinstance(field, models.CharField | models.TextField):
        return _texts(list(raw), field.max_length)
    return raw


def _prepared(field: models.Field) -> Callable[[Any], Any]:
    """The field's value as this database stores it, each distinct value prepared once:
    most findings are first seen at the run's as-of time."""
    seen: dict[Any, Any] = {}

    def prepare(value: Any) -> Any:
        try:
            return seen[value]
        except KeyError:
            prepared = seen[value] = field.get_db_prep_save(value, connection)
            return prepared

    return prepare


def _amount(finding: RawFinding) -> Decimal | None:
    # Money in several currencies is not summed into one amount.
    if not finding.exposure or finding.currency == MIXED:
        return None
    return storable_amount(finding.amount_at_risk) or None


def storable_amount(amount: Decimal | None) -> Decimal | None:
    """The amount, capped to what its column holds and rounded to its cents."""
    if amount is None:
        return None
    capped = max(-MAX_STORED_AMOUNT, min(amount, MAX_STORED_AMOUNT))
    return capped.quantize(STORED_PLACES, rounding=ROUND_HALF_EVEN)


def _texts(values: list[Any], limit: int | None) -> list[Any]:
    """A chunk's text column, checked as one string: in the common case every value is
    storable and within the column's limit, and the values go as they are."""
    try:
        whole = "".join(values)
    except TypeError:  # a value that is not text: each on its own
        return [_text(value, limit) for value in values]
    if is_storable(whole) and (not limit or max(map(len, values)) <= limit):
        return values
    return [_text(value, limit) for value in values]


def _text(value: Any, limit: int | None) -> Any:
    if value.__class__ is not str:
        return value
    value = storable(value)
    return value[:limit] if limit and len(value) > limit else value


def _jsons(values: list[Any], field: models.JSONField) -> list[str]:
    """A chunk's JSON column, checked as one document: in the common case it is UTF-8
    with no escaped NUL, and each value is simply its JSON."""
    try:
        whole = orjson.dumps(values)
    except orjson.JSONEncodeError:  # a lone surrogate somewhere: each on its own
        return [_json(value, field) for value in values]
    if b"\\u0000" in whole or None in values:
        return [_json(value, field) for value in values]
    dumps = orjson.dumps
    return [dumps(value).decode() for value in values]


def _json(value: Any, field: models.JSONField) -> str:
    if value is None:
        value = field.get_default()
    try:
        text = orjson.dumps(value).decode()
    except orjson.JSONEncodeError:  # a lone surrogate in a record id
        return orjson.dumps(storable_tree(value)[0]).decode()
    # Postgres jsonb refuses an escaped NUL as it refuses NUL in text.
    return orjson.dumps(storable_tree(value)[0]).decode() if "\\u0000" in text else text
