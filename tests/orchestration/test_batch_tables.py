"""A reviewed batch's tables: kept as Parquet once, by the first specialist that has the
parse at hand, and read by the coordinator for the deals' stages and the fill rates."""

from __future__ import annotations

import pytest

from reviews.engine.tables.store import META
from reviews.orchestration.store import tables
from tests.orchestration.helpers import reviewed_run, seed_batch

pytestmark = pytest.mark.django_db


def test_a_review_keeps_its_batchs_tables_and_fill_rates():
    batch = seed_batch()
    batch["contacts"][0]["phone"] = "+1 415 555 0134"
    run = reviewed_run(batch)
    folder = tables.tables_folder(run.batch)
    assert sorted(p.name for p in folder.iterdir()) == [
        "companies.parquet", "contacts.parquet", "deals.parquet", META,
    ]  # fmt: skip
    rates = {row["name"]: row for row in run.batch.fill_rates["contacts"]}
    assert (rates["phone"]["filled"], rates["phone"]["total"]) == (1, 2)
    # The seed's deal is past its close date, open at Decision Maker Bought-In.
    assert run.standing["by_stage"] == [
        {"name": "Decision Maker Bought-In", "critical": 0, "warning": 1, "total": 1}
    ]


def test_kept_tables_are_read_not_built_again(monkeypatch):
    run = reviewed_run(seed_batch())

    def parse_again(batch):
        raise AssertionError("the batch was parsed again")

    monkeypatch.setattr(tables, "load_parsed", parse_again)
    assert tables.deal_stages(run.batch) == {"dl_201": "Decision Maker Bought-In"}
