"""The detectors' database spills to a folder of its process's own (spill.py); a process
that ends without closing its database leaves that folder, and the next one to open a
database on the machine removes it."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
from pathlib import Path

from reviews.engine.tables import columns, spill

HOST = socket.gethostname()
ROOT = Path(__file__).resolve().parents[2]

# A process that spills (a 16 MB ceiling, 200 MB of table) and ends without exit
# handlers, as a pool's child may: DuckDB never closes, so its folder stays.
SPILL_AND_VANISH = """
import os, sys
import duckdb
from reviews.engine.tables import spill
folder = spill.process_folder(sys.argv[1])
database = duckdb.connect(config={"memory_limit": "16MB", "temp_directory": folder})
database.execute("CREATE TABLE t AS SELECT range AS i, repeat('x', 100) AS s FROM range(2000000)")
print(folder, flush=True)
os._exit(0)
"""


def ended_process_id() -> int:
    """The id of a process that has ended (a process id is not reused this soon)."""
    process = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(process.stdout)


def test_the_folders_of_this_hosts_ended_processes_are_removed(tmp_path, caplog):
    dead, mine = tmp_path / f"{HOST}-{ended_process_id()}", tmp_path / f"{HOST}-{os.getpid()}"
    elsewhere = tmp_path / f"another-host-{ended_process_id()}"  # its process ids are not ours
    other = tmp_path / "notes"
    for folder in (dead, mine, elsewhere, other):
        folder.mkdir()
        (folder / "duckdb_temp_storage-0.tmp").write_bytes(b"x")

    with caplog.at_level(logging.INFO, logger=spill.__name__):
        assert spill.process_folder(str(tmp_path)) == str(mine)

    assert not dead.exists()
    assert mine.exists() and elsewhere.exists() and other.exists()
    assert dead.name in caplog.text and elsewhere.name not in caplog.text


def test_a_spill_left_by_a_process_that_vanished_goes_when_a_database_opens(monkeypatch, tmp_path):
    parent = tmp_path / "spill"
    child = subprocess.run(
        [sys.executable, "-c", SPILL_AND_VANISH, str(parent)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    left = Path(child.stdout.strip())
    assert left.parent == parent and any(left.iterdir())  # it spilled, and stayed

    # This process's database opened anew, in that folder; its own put back afterwards.
    monkeypatch.setattr(columns, "_DATABASE", None)
    monkeypatch.setattr(columns, "_CONFIG", {})
    columns.configure(memory_mb=64, spill_dir=str(parent))
    columns._database()

    assert not left.exists()
