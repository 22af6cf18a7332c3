"""A stored batch's tables: built once from its parse, kept as Parquet in the store
beside its upload (revreview/store.py), read by every later task,
page and command that needs them (reviews/engine/tables/). DuckDB reads local files:
TABLES_DIR is each machine's cache of them, and a worker that has not got a batch's
tables fetches them from the store rather than parse the upload again."""

from __future__ import annotations

import logging

from reviews.engine import batch as plain
from reviews.engine.tables import profile
from reviews.engine.tables.build import Tables, build_tables
from reviews.engine.tables.store import META, read_parquet, write_parquet
from reviews.models import Batch
from reviews.orchestration.store.parsed import load_parsed
from reviews.orchestration.store.table_files import (
    fetch_tables,
    share_tables,
    tables_folder,
    tables_key,
)

logger = logging.getLogger(__name__)


def needs_tables(batch: Batch) -> bool:
    """Whether a review of `batch` reads its tables: a dataset's sync does (its page shows
    fill rates and problems by stage). A one-off upload's review does without them, and
    does not pay for building them (bench/README.md, the tables built once per batch)."""
    return batch.dataset_id is not None


def keep_tables(batch: Batch, parsed: plain.Batch) -> None:
    """Build and keep the batch's tables from its parse, unless kept already (here, or
    in the store): the first specialist of a run does it while the parse is at hand."""
    folder = tables_folder(batch)
    if (folder / META).exists() or fetch_tables(batch):
        return
    write_parquet(build_tables(parsed), folder, parsed)
    share_tables(folder, tables_key(batch))


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
