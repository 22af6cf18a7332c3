"""The columns the detectors query (reviews.engine.specialists): each object's records as
a DuckDB table in a schema of the batch's own (Columns), built the first time a detector
asks for that object, once per batch.

Each table has `row`, the record's position in its list (a rule's rows come back in it,
so its findings keep the records' order), and the documented columns some rule queries
(QUERIED, typed as build.py types them); each list some rule reads is a table of its own
(LINKS). Deals also have their stage's state as every rule resolves it
(build.STAGE_COLUMNS); `amount_currency`, the amount's own currency or the batch's
(Batch.currency_of); `amount_sign`, -1, 0 or 1, exact where the DECIMAL(38, 6) `amount`
is not (an amount under a millionth reads 0 there); and `stage_given`, whether a stage
is given at all, not blank (Batch.stage_of's first test). Contacts have the keys
normalize.py makes of them (KEYED: keys.py); the companies' keys, the contacts' person
names and their email domains (email_domains.py) are tables of their own, made when a
query names them (KEY_TABLES, EMAIL_DOMAIN_TABLE). The team's rules read every
property, from the kept tables (build.py)."""

from __future__ import annotations

import atexit
import os
import weakref
from collections.abc import Callable
from decimal import Decimal
from itertools import chain, count
from operator import attrgetter
from tempfile import gettempdir
from typing import Any

import duckdb
import numpy as np

from reviews.engine.batch import Batch, Deal
from reviews.engine.tables import email_domains, keys, spill
from reviews.engine.tables.build import (
    STAGE_COLUMNS,
    column_values,
    create_table,
    once_each,
    stage_columns,
    typed_columns,
)

# The documented columns the detectors' queries read, per object: a rule that reads
# another adds it here (each is one more pass over the records, and a column to fill).
QUERIED = {
    "companies": ("id", "enriched_at", "updated_at"),
    "contacts": ("id", "company_id"),
    "deals": ("id", "amount", "close_date", "company_id"),
    "leads": ("id", "converted", "owner", "owner_active"),
}
# The documented lists the queries read, each a table of its own, `<object>_<list>`, a
# (row, id) per entry in order: flat, they are filled in C (a LIST column of Python
# lists took 1.5 s for the 1M batch's three), and read by a join.
LINKS = {"contacts": ("company_ids",), "deals": ("company_ids", "contact_ids")}
# Columns normalize.py makes, per object: name -> (type, the batch's values in order).
KEYED: dict[str, dict[str, tuple[str, Callable[[Batch], list]]]] = {
    "contacts": {"email_key": ("VARCHAR", keys.contact_emails)},
    "leads": {"email_key": ("VARCHAR", keys.lead_emails)},
}
# The companies' keys and the contacts' person names, each a (row, key) table of its own,
# built when a query names it: table -> (its key column, the batch's values in order). A
# task that compares no names or domains (freshness) should not pay a second or more per
# million records for them, nor one that compares no names (attribution) for names.
KEY_TABLES: dict[str, tuple[str, Callable[[Batch], list]]] = {
    "companies_domain_key": ("domain_key", keys.company_domains),
    "companies_name_key": ("name_key", keys.company_names),
    "contacts_person_key": ("person_key", keys.person_names),
}
# Each contact's email domain, `email_domain_key` (the part after the last @ of its
# normalised email, made a domain as normalize.domain makes it), and whether it is a
# free-mail one, `free_mail` (normalize.is_free_mail): a table of its own, like the
# companies' keys, holding the contacts that have one, each with its row and its
# `company_id` (what attribution compares the domain with: no join back to the
# contacts). Made by email_domains.py, each distinct part once. Not sorted back into the
# contacts' order: a sort of the whole contacts table spilled past the database's
# ceiling (bench/README.md); a query reads them by row.
EMAIL_DOMAIN_TABLE = "contacts_email_domain"
# What the deals add, beside their stage's state (build.STAGE_COLUMNS).
_DEALS_ADDED = {"amount_currency": "VARCHAR", "amount_sign": "TINYINT", "stage_given": "BOOLEAN"}


class Columns:
    """A batch's detector tables: `query` loads each object its SQL names, then runs it.
    They live in a schema of the batch's own in the process's database, dropped when
    the batch goes: opening a database costs about 25 ms of CPU, a schema 0.3 ms, and a
    small batch's whole review less than the database."""

    def __init__(self, batch: Batch) -> None:
        # Weakly: the batch holds its tables (Batch.derived). A cycle would outlive the
        # batch, records and tables, since the parse freezes the batch out of the cyclic
        # collector's view (reviews.engine.gcpause).
        self._batch = weakref.ref(batch)
        schema = f"batch_{next(_SCHEMAS)}"
        database = _database()
        self.connection = database.cursor()  # a cursor: a connection of this thread's own
        self.connection.execute(f"CREATE SCHEMA {schema}; USE memory.{schema}")
        # Not at exit: the database closes then (_close), its schemas with it.
        weakref.finalize(self, _drop, database, schema).atexit = False
        self.loaded: set[str] = set()
        # A small batch's queries run on one thread: scheduling more cost a third of
        # their time (a 10-record review's detectors: 53 ms of CPU, 39 ms on one).
        self.threads = 1 if sum(batch.counts.values()) < _ONE_THREAD_BELOW else _THREADS

    @property
    def batch(self) -> Batch:
        batch = self._batch()
        if batch is None:
            raise RuntimeError("the batch of these tables is gone")
        return batch

    def query(self, sql: str, objects: tuple[str, ...], **params: Any) -> list[tuple]:
        """The rows of `sql` (DuckDB SQL over the tables named in `objects`), given those of
        `params` it names as `$name` (DuckDB refuses a parameter a statement lacks)."""
        self._execute(sql, objects, params)
        return self.connection.fetchall()

    def _execute(self, sql: str, objects: tuple[str, ...], params: dict[str, Any]) -> None:
        for name in objects:
            self._load(name)
        _use_threads(self.connection, self.threads)
        named = {key: value for key, value in params.items() if f"${key}" in sql}
        self.connection.execute(sql, named)

    def arrays(self, sql: str, objects: tuple[str, ...], **params: Any) -> dict[str, np.ndarray]:
        """query's result as a numpy array per column: for results of a row per record,
        which as tuples would cost a Python object per value."""
        self._execute(sql, objects, params)
        return self.connection.fetchnumpy()

    def _load(self, name: str) -> None:
        if name in self.loaded:
            return
        if name in KEY_TABLES:
            self._key_table(name, *KEY_TABLES[name])
            return
        if name == EMAIL_DOMAIN_TABLE:
            self._load("contacts")
            _use_threads(self.connection, self.threads)
            email_domains.create(self.connection, EMAIL_DOMAIN_TABLE)
            self.loaded.add(name)
            return
        records = getattr(self.batch, name)
        typed = typed_columns(name)
        types = {"row": "BIGINT", **{column: typed[column] for column in QUERIED[name]}}
        data = {"row": np.arange(len(records))}
        data |= {column: column_values(records, column, typed[column]) for column in QUERIED[name]}
        for column, (kind, values) in KEYED.get(name, {}).items():
            types[column], data[column] = kind, values(self.batch)
        if name == "deals":
            types |= {**STAGE_COLUMNS, **_DEALS_ADDED}
            data |= self._deal_columns(records)
        create_table(self.connection, name, types, data, {})
        for column in LINKS.get(name, ()):
            self._link_table(f"{name}_{column}", list(map(attrgetter(column), records)))
        self.loaded.add(name)

    def _key_table(self, name: str, key: str, values: Callable[[Batch], list]) -> None:
        found = values(self.batch)
        data = {"row": np.arange(len(found)), key: found}
        create_table(self.connection, name, {"row": "BIGINT", key: "VARCHAR"}, data, {})
        self.loaded.add(name)

    def _link_table(self, name: str, lists: list[list[str]]) -> None:
        sizes = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        _links = {  # noqa: F841 (read by the statement below: a replacement scan)
            "row": np.repeat(np.arange(len(lists)), sizes),
            "id": np.fromiter(chain.from_iterable(lists), dtype=object, count=int(sizes.sum())),
        }
        # `name` is LINKS', not the user's.
        self.connection.execute(
            f'CREATE TABLE "{name}" AS SELECT "row", CAST("id" AS VARCHAR) AS "id" FROM _links'  # noqa: S608
        )

    def _deal_columns(self, deals: list[Deal]) -> dict[str, list]:
        batch = self.batch
        return {
            **stage_columns(batch, deals),
            "amount_currency": [batch.currency_of(deal) for deal in deals],
            "amount_sign": once_each(_sign, map(attrgetter("amount"), deals)),
            "stage_given": once_each(_given, map(attrgetter("stage"), deals)),
        }


_SCHEMAS = count()
_DATABASE: tuple[int, duckdb.DuckDBPyConnection] | None = None  # (its process id, it)
# The process database's memory ceiling and the folder its tables and queries spill to
# past it (configure). DuckDB's own default ceiling is 80% of the machine's memory, on
# top of the parsed batch's.
_CONFIG: dict[str, str] = {}


def configure(*, memory_mb: int, spill_dir: str = "") -> None:
    """The detectors' database's ceiling and spill folder (settings DETECTOR_MEMORY_MB
    and DETECTOR_SPILL_DIR; blank: `revreview-spill` in the system's temporary folder),
    for the databases this process opens from now on."""
    _CONFIG.update(memory_limit=f"{int(memory_mb)}MB", temp_directory=spill_dir)


def _database() -> duckdb.DuckDBPyConnection:
    """The process's in-memory database; a new one in a process forked after it opened
    (a worker's child): DuckDB's threads do not survive a fork."""
    global _DATABASE
    if _DATABASE is None or _DATABASE[0] != os.getpid():
        database = duckdb.connect(":memory:", config={**_CONFIG, "temp_directory": _spill()})
        atexit.register(_close, os.getpid(), database)
        # A TIMESTAMPTZ cast to TIMESTAMP reads as UTC, whatever the machine's zone.
        database.execute("SET GLOBAL TimeZone = 'UTC'")
        email_domains.setup(database)
        _DATABASE = (os.getpid(), database)
        _threads_now.clear()
    return _DATABASE[1]


def _spill() -> str:
    """The process's own spill folder (spill.py); without one named, DuckDB would spill
    to `.tmp` in the working folder."""
    parent = _CONFIG.get("temp_directory") or os.path.join(gettempdir(), "revreview-spill")
    return spill.process_folder(parent)


def _close(opened_by: int, database: duckdb.DuckDBPyConnection) -> None:
    """At exit, close the database the process opened (and so remove its spill folder);
    never one a forked child inherited."""
    if os.getpid() == opened_by:
        database.close()


_ONE_THREAD_BELOW = 50_000  # records
_THREADS = os.cpu_count() or 1  # DuckDB's own default
_threads_now: list[int] = []  # the process database's setting, once set


def _use_threads(cursor: duckdb.DuckDBPyConnection, threads: int) -> None:
    """The database's thread count (a setting of the whole database), set through the
    caller's own cursor: a connection must not be shared between threads."""
    if _threads_now != [threads]:
        cursor.execute(f"SET threads = {int(threads)}")
        _threads_now[:] = [threads]


def _drop(database: duckdb.DuckDBPyConnection, schema: str) -> None:
    database.cursor().execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def columns(batch: Batch) -> Columns:
    """The batch's detector tables, made once per batch whichever detector asks first."""
    return batch.derive("columns", Columns)


def _given(text: str) -> bool:
    return bool(text.strip())


def _sign(amount: Decimal) -> int:
    return (amount > 0) - (amount < 0)
