"""The fast loop's SQLite in memory, migrated once per change of what migrating makes.

Running every migration took each xdist worker about 5 s (Django renders the models'
state again and again). The first worker to migrate keeps a copy of the database in
`.pytest_cache/`, named by a hash of what the migrations are made of; a worker that finds
it copies it into its in-memory database, and Django's `migrate` then runs as always:
anything the copy has not applied (a new migration) is applied on top. Postgres (the
full run) migrates as before."""

from __future__ import annotations

import ast
import hashlib
import os
import sqlite3
import tempfile
from pathlib import Path

import django
from django.apps import apps
from django.db.backends.sqlite3.creation import DatabaseCreation

from tests.services import ROOT

CACHE = ROOT / ".pytest_cache" / "migrated-db"
_kept: list[sqlite3.Connection] = []  # holds a restored in-memory database open


def migrations_digest() -> str:
    """A hash of everything migrating an empty database reads: every installed app's
    migration files, the project modules they import, Django's and SQLite's versions."""
    digest = hashlib.sha256(f"{django.__version__} {sqlite3.sqlite_version}".encode())
    for config in sorted(apps.get_app_configs(), key=lambda c: c.label):
        folder = Path(config.path) / "migrations"
        for path in sorted(folder.glob("*.py")):
            source = path.read_bytes()
            digest.update(f"{config.label}/{path.name}".encode() + b"\0" + source)
            for module in sorted(_project_imports(source)):
                digest.update(module.encode() + b"\0" + _module_file(module).read_bytes())
    return digest.hexdigest()[:20]


def _project_imports(source: bytes) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return {name for name in found if _module_file(name).is_file()}


def _module_file(module: str) -> Path:
    path = ROOT.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def use_a_migrated_copy() -> None:
    """Make Django's SQLite test-database creation start from the kept copy (for the
    rest of this process)."""
    create_empty = DatabaseCreation._create_test_db
    create = DatabaseCreation.create_test_db
    copy = CACHE / f"{migrations_digest()}.sqlite3"

    def _create_test_db(self, verbosity, autoclobber, keepdb=False):
        name = create_empty(self, verbosity, autoclobber, keepdb)
        if self.is_in_memory_db(name) and copy.exists():
            database = sqlite3.connect(name, uri=True)
            with sqlite3.connect(copy) as kept:
                kept.backup(database)
            _kept.append(database)  # the last connection closing would drop it
        return name

    def create_test_db(self, *args, **kwargs):
        name = create(self, *args, **kwargs)
        if self.is_in_memory_db(name) and not copy.exists():
            CACHE.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=CACHE, suffix=".tmp")
            os.close(handle)
            try:
                with sqlite3.connect(temporary) as kept:
                    self.connection.connection.backup(kept)
                kept.close()
                os.replace(temporary, copy)  # whole or not at all, if two workers race
            finally:
                Path(temporary).unlink(missing_ok=True)
        return name

    DatabaseCreation._create_test_db = _create_test_db
    DatabaseCreation.create_test_db = create_test_db
