"""The detectors' database's spill folder: one per process, inside the deployment's
(settings DETECTOR_SPILL_DIR). DuckDB writes its tables there past the memory ceiling
and removes the folder when the database closes, so a shared folder could go from under
another process. A process that ends without closing its database (killed, or ended by
os._exit as a pool's child may be) leaves its folder behind: the next process to open a
database on the same machine removes it."""

from __future__ import annotations

import logging
import os
import shutil
import socket

logger = logging.getLogger(__name__)


def process_folder(parent: str) -> str:
    """This process's spill folder inside `parent` (made by DuckDB when it first spills),
    after removing those left by this machine's processes that have ended."""
    os.makedirs(parent, exist_ok=True)  # DuckDB makes only the last folder of a path
    removed = sweep(parent)
    if removed:
        logger.info("removed the spill folders of ended processes: %s", ", ".join(removed))
    return os.path.join(parent, f"{_PREFIX}{os.getpid()}")


# The host's name in each folder's: containers sharing one volume each have their own
# process ids, and one must not take another's live process for a dead one of its own.
_PREFIX = f"{socket.gethostname()}-"


def sweep(parent: str) -> list[str]:
    """Remove the folders of this host's processes that are no longer running; their
    names."""
    removed = []
    for entry in os.scandir(parent):
        pid = entry.name.removeprefix(_PREFIX)
        if pid != entry.name and pid.isdigit() and not _running(int(pid)):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.name)
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's: running
        return True
    return True
