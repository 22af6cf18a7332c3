"""The columns the detectors query (reviews.engine.specialists): each object's documented
fields as a DuckDB table in an in-memory database of the batch's own, built the first time
a detector asks for that object, once per batch.

Beside the documented columns and the deals' stage state (build.py's typed columns), each
table has `row`, the record's position in its list: a rule's rows come back in it, so its
findings keep the records' order. Deals also have `amount_currency`, the amount's own
currency or the batch's (Batch.currency_of); `amount_sign`, -1, 0 or 1, exact where the
DECIMAL(38, 6) `amount` is not (an amount under a millionth reads 0 there); and
`stage_given`, whether a stage is given at all, not blank (Batch.stage_of's first test).
The team's rules read every property from the kept tables (build.py); the detectors read
only the fields their kinds declare."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import duckdb
import numpy as np

from reviews.engine.batch import Batch
from reviews.engine.tables.build import (
    STAGE_COLUMNS,
    column_values,
    create_table,
    once_each,
    stage_columns,
    typed_columns,
)

# What each object's table adds to its documented columns, with their DuckDB types.
_ADDED = {"row": "BIGINT"}
_DEALS_ADDED = {"amount_currency": "VARCHAR", "amount_sign": "TINYINT", "stage_given": "BOOLEAN"}


class Columns:
    """A batch's detector tables: `query` loads each object its SQL names, then runs it."""

    def __init__(self, batch: Batch) -> None:
        self.batch = batch
        self.connection = duckdb.connect(":memory:")
        self.loaded: set[str] = set()

    def query(self, sql: str, objects: tuple[str, ...], **params: Any) -> list[tuple]:
        """The rows of `sql` (DuckDB SQL over the tables named in `objects`), given those of
        `params` it names as `$name` (DuckDB refuses a parameter a statement lacks)."""
        for name in objects:
            self._load(name)
        named = {key: value for key, value in params.items() if f"${key}" in sql}
        return self.connection.execute(sql, named).fetchall()

    def _load(self, name: str) -> None:
        if name in self.loaded:
            return
        records = getattr(self.batch, name)
        # No detector queries a list (contact ids) yet: the slowest columns to build.
        typed = {c: t for c, t in {**_ADDED, **typed_columns(name)}.items() if t != "VARCHAR[]"}
        data = {"row": np.arange(len(records))}
        data |= {
            column: column_values(records, column, kind)
            for column, kind in typed.items()
            if column not in STAGE_COLUMNS and column not in data
        }
        if name == "deals":
            typed |= _DEALS_ADDED
            data |= stage_columns(self.batch, records)
            data["amount_currency"] = [self.batch.currency_of(deal) for deal in records]
            data["amount_sign"] = once_each(_sign, (deal.amount for deal in records))
            data["stage_given"] = once_each(_given, data["stage"])
        create_table(self.connection, name, typed, data, {})
        self.loaded.add(name)


def columns(batch: Batch) -> Columns:
    """The batch's detector tables, one database per batch whichever detector asks first."""
    return batch.derive("columns", Columns)


def _given(text: str) -> bool:
    return bool(text.strip())


def _sign(amount: Decimal) -> int:
    return (amount > 0) - (amount < 0)
