"""The detectors' DuckDB database keeps to its memory ceiling (settings
DETECTOR_MEMORY_MB) and spills past it to its folder (DETECTOR_SPILL_DIR), finding the
same as without a ceiling."""

from __future__ import annotations

import json
import os
import socket
from datetime import UTC, datetime

import duckdb
import pytest

from reviews.engine.ingest import UploadedFile, parse_upload
from reviews.engine.rules import Rules
from reviews.engine.specialists import NAMES, detector
from reviews.engine.tables import columns
from reviews.samplegen import generate


def setting(connection, name: str) -> str:
    return connection.execute(f"SELECT current_setting('{name}')").fetchone()[0]


@pytest.fixture
def fresh_database(monkeypatch):
    """The process database opened anew by the next batch, and the process's own put
    back afterwards."""
    monkeypatch.setattr(columns, "_DATABASE", None)
    monkeypatch.setattr(columns, "_CONFIG", {})
    monkeypatch.setattr(columns, "_threads_now", [])


NOW = datetime(2026, 11, 28, tzinfo=UTC)


def reviewed(upload: bytes, kept: list | None = None) -> list[tuple]:
    """Every detector's findings on a fresh parse of `upload` (a parse's tables are
    built in the process database open when a detector first asks). The batch is
    appended to `kept`: its tables are dropped when it goes."""
    batch = parse_upload([UploadedFile("g.json", upload)], as_of=None, received_at=NOW)
    if kept is not None:
        kept.append(batch)
    return [
        (f.kind, f.severity, tuple(f.record_ids), f.amount_at_risk, f.confidence)
        for name in NAMES
        for f in detector(name)(batch, Rules())
    ]


def test_the_database_has_the_deployment_s_ceiling_and_spill_folder(settings):
    database = columns._database()
    ceiling = duckdb.connect(config={"memory_limit": f"{settings.DETECTOR_MEMORY_MB}MB"})
    assert setting(database, "memory_limit") == setting(ceiling, "memory_limit")
    # A folder of the process's own: DuckDB removes it when the database closes.
    folder = f"revreview-spill/{socket.gethostname()}-{os.getpid()}"
    assert setting(database, "temp_directory").endswith(folder)


# 200k records' tables and the queries' working memory pass 48 MB: 8-9 MB of them are
# still on disk at the end. A ceiling much lower fails the queries' joins (DuckDB spills
# tables, not all of a join's working memory): 28 MB did, and 40 MB once in four runs.
CEILING_MB = 48


@pytest.mark.slow  # two reviews of 200k records
def test_a_batch_past_the_ceiling_spills_and_finds_the_same(fresh_database, monkeypatch, tmp_path):
    upload = json.dumps(generate(200_000, seed=3)[0]).encode()
    unbounded = reviewed(upload)
    columns.configure(memory_mb=CEILING_MB, spill_dir=str(tmp_path / "spill"))
    monkeypatch.setattr(columns, "_DATABASE", None)  # opened anew, with the ceiling

    kept: list = []
    spilled = reviewed(upload, kept)

    database = columns._database()
    ceiling = duckdb.connect(config={"memory_limit": f"{CEILING_MB}MB"})
    assert setting(database, "memory_limit") == setting(ceiling, "memory_limit")
    folder = tmp_path / "spill" / f"{socket.gethostname()}-{os.getpid()}"
    assert setting(database, "temp_directory") == str(folder)
    (used,) = database.execute(
        "SELECT sum(temporary_storage_bytes) FROM duckdb_memory()"
    ).fetchone()
    assert used > 0  # its tables went to the folder, not only to memory
    assert spilled == unbounded
    assert len(unbounded) > 100
