"""Where a stored batch's tables live: a folder in this machine's cache (TABLES_DIR) and
a prefix in the store (revreview/store.py), and the copying between the two. Read by
the tables' builder (tables.py) and by whatever reads a batch back from them
(parsed.py), without either importing the other."""

from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings

from reviews.engine.tables.store import META, write_folder
from reviews.models import Batch
from revreview import store

logger = logging.getLogger(__name__)


def tables_folder(batch: Batch) -> Path:
    """The batch's folder: its content key is part of the name, so a batch re-parsed
    with other pipelines (a new content key) gets new tables."""
    return Path(settings.TABLES_DIR) / f"{batch.pk}-{(batch.content_key or 'x')[:16]}"


def tables_folders(batch_id: int) -> list[Path]:
    """Every folder of this machine's cache that tables_folder named for the batch id,
    whatever its content key."""
    return list(Path(settings.TABLES_DIR).glob(f"{batch_id}-*"))


def tables_key(batch: Batch) -> str:
    """The prefix of the batch's tables in the store: named as its local folder."""
    return f"{store.batch_prefix(batch.pk)}tables/{tables_folder(batch).name}/"


def share_tables(folder: Path, prefix: str) -> None:
    """Copy a local tables folder to the store, its META last: a reader that finds the
    META in the store finds every file before it."""
    files = sorted(folder.iterdir(), key=lambda path: path.name == META)
    for path in files:
        store.put_file(path, prefix + path.name)


def fetch_tables(batch: Batch) -> bool:
    """Copy the batch's tables from the store to this machine's cache; False if the
    store holds none (not built yet, or only on a machine that could not store them)."""
    prefix = tables_key(batch)
    if not store.exists(prefix + META):
        return False

    def fill(work: Path) -> None:
        for key in store.listing(prefix):
            store.download(key, work / key.removeprefix(prefix))

    write_folder(tables_folder(batch), fill)
    logger.info("batch %s: its tables fetched from the store", batch.pk)
    return True
