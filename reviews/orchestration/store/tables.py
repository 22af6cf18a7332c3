"""A stored batch's tables: parsed once, kept as Parquet in TABLES_DIR, read by every
later task, page and command that needs them (reviews/engine/tables/)."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from reviews.engine.tables.build import Tables, build_tables
from reviews.engine.tables.store import read_parquet, write_parquet
from reviews.models import Batch
from reviews.orchestration.store.parsed import load_parsed


def tables_folder(batch: Batch) -> Path:
    """The batch's folder: its content key is part of the name, so a batch re-parsed
    with other pipelines (a new content key) gets new tables."""
    return Path(settings.TABLES_DIR) / f"{batch.pk}-{(batch.content_key or 'x')[:16]}"


def tables_for(batch: Batch) -> Tables:
    """The batch's tables: read from the Parquet kept for it, else built from its parse
    and kept."""
    folder = tables_folder(batch)
    tables = read_parquet(folder)
    if tables is None:
        tables = build_tables(load_parsed(batch))
        write_parquet(tables, folder)
    return tables
