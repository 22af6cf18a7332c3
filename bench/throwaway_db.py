"""A benchmark's own Postgres database on the test server (tests.settings), made empty
and migrated, and dropped after: `with throwaway_database("dataset_page"): ...`."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def throwaway_database(label: str) -> Iterator[None]:
    """Raises SystemExit(2) naming the problem when Postgres cannot be used."""
    from django.conf import settings
    from django.db import connection

    if settings.POSTGRES_PROBLEM:
        print(f"needs Postgres: {settings.POSTGRES_PROBLEM}", file=sys.stderr)
        raise SystemExit(2)
    # Its own name, so a test run or another benchmark on this server is never dropped;
    # set on the connection's own settings dict (filled with defaults by now).
    connection.settings_dict["TEST"]["NAME"] = f"bench_{label}_{os.getpid()}"
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        yield
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
