"""Locking a tables database before a team's rule runs on it: no file or network access,
no setting changed afterwards, a memory ceiling, and a deadline (DuckDB has no statement
timeout, so a timer interrupts the query)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb


class RuleTimeout(Exception):
    """A query ran past its deadline and was interrupted."""


def lock(connection: duckdb.DuckDBPyConnection, *, memory_mb: int, threads: int = 1) -> None:
    """From here on, `connection` reads only the tables it holds. Irreversible."""
    connection.execute(f"SET memory_limit = '{int(memory_mb)}MB'")
    connection.execute(f"SET threads = {int(threads)}")
    connection.execute("SET enable_external_access = false")
    connection.execute("SET autoload_known_extensions = false")
    connection.execute("SET lock_configuration = true")


@contextmanager
def deadline(connection: duckdb.DuckDBPyConnection, seconds: float) -> Iterator[None]:
    """Interrupt whatever `connection` runs once `seconds` have passed; RuleTimeout then."""
    fired = threading.Event()

    def interrupt() -> None:
        fired.set()
        connection.interrupt()

    timer = threading.Timer(seconds, interrupt)
    timer.start()
    try:
        yield
    except duckdb.InterruptException as error:
        if fired.is_set():
            raise RuleTimeout(f"took longer than {seconds:g} s") from error
        raise
    finally:
        timer.cancel()
