"""A stored batch's tables: built once from its parse, kept as Parquet in the store
beside its upload (revreview/store.py), read by every later task,
page and command that needs them (reviews/engine/tables/). DuckDB reads local files:
TABLES_DIR is each machine's cache of them, and a worker that has not got a batch's
tables fetches them from the store rather than parse the upload again."""

from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings

from reviews.engine import batch as plain
from reviews.engine.tables import profile
from reviews.engine.tables.build import Tables, build_tables
from reviews.engine.tables.store import META, read_parquet, write_folder, write_parquet
from reviews.models import Batch
from reviews.orchestration.store.parsed import load_parsed
from revreview import store

logger = logging.getLogger(__name__)


def tables_folder(batch: Batch) -> Path:
    """The batch's folder: its content key is part of the name, so a batch re-parsed
    with other pipelines (a new content key) gets new tables."""
    return Path(settings.TABLES_DIR) / f"{batch.pk}-{(batch.content_key or 'x')[:16]}"


def needs_tables(batch: Batch) -> bool:
    """Whether a review of `batch` reads its tables: a dataset's sync does (its page shows
    fill rates and problems by stage). A one-off upload's review does without them, and
    does not pay for building them (bench/README.md, the tables built once per batch)."""
    return batch.dataset_id is not None


def tables_key(batch: Batch) -> str:
    """The prefix of the batch's tables in the store: named as its local folder."""
    return f"{store.batch_prefix(batch.pk)}tables/{tables_folder(batch).name}/"


def keep_tables(batch: Batch, parsed: plain.Batch) -> None:
    """Build and keep the batch's tables from its parse, unless kept already (here, or
    in the store): the first specialist of a run does it while the parse is at hand."""
    folder = tables_folder(batch)
    if (folder / META).exists() or fetch_tables(batch):
        return
    write_parquet(build_tables(parsed), folder)
    share_tables(folder, tables_key(batch))


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


def keep_tables_or_log(batch: Batch, parsed: plain.Batch) -> None:
    """keep_tables for a specialist: tables it cannot build are logged, and its own review
    goes on (what needs them reports their absence: the team's rules could not run)."""
    try:
        keep_tables(batch, parsed)
    except Exception:
        logger.exception("batch %s: its tables could not be built", batch.pk)


def tables_for(batch: Batch, *, load: bool = True) -> Tables:
    """The batch's tables: read from the Parquet kept for it (on this machine, else
    fetched from the store), else built from its parse and kept. `load`: as
    reviews.engine.tables.store.read_parquet."""
    folder = tables_folder(batch)
    tables = read_parquet(folder, load=load)
    if tables is None:
        if not fetch_tables(batch):  # parsed only when no machine has kept them
            keep_tables(batch, load_parsed(batch))
        tables = read_parquet(folder, load=load)
    return tables


def profile_of(batch: Batch) -> dict[str, str] | None:
    """For the coordinator of a batch that needs its tables: the deals' stages, with the
    batch's fill rates kept on the way; None for one that does not. What the tables add
    is a view of the review, not part of it: if they cannot be read, the run finishes
    without them (logged)."""
    if not needs_tables(batch):
        return None
    try:
        views = tables_for(batch, load=False)  # opened once, for both
        if not batch.fill_rates:  # worked out once per batch, kept on its row
            batch.fill_rates = profile.fill_rates(views)
            Batch.objects.filter(pk=batch.pk).update(fill_rates=batch.fill_rates)
        return profile.deal_stages(views)
    except Exception:
        logger.exception("batch %s: its tables could not be read", batch.pk)
        return {}
