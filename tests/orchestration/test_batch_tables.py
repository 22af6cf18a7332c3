"""A dataset's reviewed sync keeps its tables as Parquet once, by the first specialist that
has the parse at hand; the coordinator reads them for the deals' stages and the fill
rates. A one-off upload's review does without them."""

from __future__ import annotations

import shutil

import pytest

from reviews.engine.tables.store import META
from reviews.models import Batch
from reviews.orchestration.dataset import policies
from reviews.orchestration.fixes.fixplan import plan_for_run
from reviews.orchestration.serving import decide as serving
from reviews.orchestration.store import parsed as parsed_module
from reviews.orchestration.store import table_files, tables
from tests.orchestration.helpers import reviewed_run, seed_batch

pytestmark = pytest.mark.django_db


def a_sync() -> dict:
    return {**seed_batch(), "dataset": "acme-hubspot"}


def test_a_review_keeps_its_batchs_tables_and_fill_rates():
    batch = a_sync()
    batch["contacts"][0]["phone"] = "+1 415 555 0134"
    run = reviewed_run(batch)
    folder = tables.tables_folder(run.batch)
    # Per object its table, and the records (with their kept fields) it is read back into.
    ends = (".parquet", ".records.parquet", ".extras", ".extras.npy")
    objects = ("companies", "contacts", "deals", "leads")
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [*(name + end for name in objects for end in ends), META]
    )
    rates = {row["name"]: row for row in run.batch.fill_rates["contacts"]}
    assert (rates["phone"]["filled"], rates["phone"]["total"]) == (1, 2)
    # The seed's deal is past its close date, open at Decision Maker Bought-In.
    assert run.standing["by_stage"] == [
        {"name": "Decision Maker Bought-In", "critical": 0, "warning": 1, "total": 1}
    ]


def test_a_one_off_upload_is_reviewed_without_tables():
    run = reviewed_run(seed_batch())
    assert not tables.tables_folder(run.batch).exists()
    assert run.batch.fill_rates == {} and "by_stage" not in run.standing


def test_kept_tables_are_read_not_built_again(monkeypatch):
    run = reviewed_run(a_sync())

    def parse_again(batch):
        raise AssertionError("the batch was parsed again")

    monkeypatch.setattr(tables, "load_parsed", parse_again)
    assert tables.profile_of(run.batch) == {"dl_201": "Decision Maker Bought-In"}


def test_tables_that_cannot_be_built_leave_the_review_whole(monkeypatch, caplog):
    # Fault injection: whatever breaks the tables, the specialists' review goes on.
    def broken(parsed):
        raise ValueError("a value the tables cannot hold")

    monkeypatch.setattr(tables, "build_tables", broken)
    batch = a_sync()
    batch["companies"][0]["employees"] = 2**70  # past 64 bits: kept as text when built
    run = reviewed_run(batch)
    assert (run.status, run.degraded) == ("done", False)
    assert "its tables could not be built" in caplog.text
    assert run.batch.fill_rates == {}


def test_a_kept_sync_is_read_back_from_its_tables_not_parsed(monkeypatch):
    run = reviewed_run(a_sync())
    as_parsed = parsed_module.parse_stored(run.batch)
    plan = plan_for_run(run)  # read from the tables too: compared with a parse's below

    def parse_again(*args, **kwargs):
        raise AssertionError("the batch was parsed again")

    monkeypatch.setattr(parsed_module, "parse_upload", parse_again)
    read = parsed_module.read_stored(run.batch)
    assert read.companies == as_parsed.companies and read.deals == as_parsed.deals
    assert serving.content_key(read) == run.batch.content_key
    # The fix plan and tuning read it so too.
    assert plan_for_run(run) == plan and plan.merges
    assert len(policies.stored_batches(run.batch.dataset)) == 1
    monkeypatch.undo()
    shutil.rmtree(tables.tables_folder(run.batch))
    monkeypatch.setattr(table_files, "fetch_tables", lambda batch: False)
    assert plan_for_run(run) == plan  # parsed, with the same plan


def test_a_one_off_upload_is_still_parsed_from_its_upload(monkeypatch):
    run = reviewed_run(seed_batch())
    calls = []
    real = parsed_module.parse_upload
    monkeypatch.setattr(
        parsed_module, "parse_upload", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    assert parsed_module.read_stored(run.batch).counts == {
        "companies": 2, "contacts": 2, "deals": 1,
    }  # fmt: skip
    assert calls == [1]


def test_tables_that_cannot_be_read_back_leave_the_batch_to_its_upload(caplog):
    run = reviewed_run(a_sync())
    (tables.tables_folder(run.batch) / "deals.records.parquet").write_bytes(b"not parquet")
    read = parsed_module.read_stored(run.batch)
    assert read.deals == parsed_module.parse_stored(run.batch).deals
    assert "its tables could not be read back; parsed" in caplog.text


def test_a_batch_ids_folders_are_those_of_every_content_key_and_no_other_id(settings, tmp_path):
    settings.TABLES_DIR = tmp_path
    keys = ("a" * 64, "b" * 64, None)
    own = {table_files.tables_folder(Batch(pk=7, content_key=key)) for key in keys}
    others = {table_files.tables_folder(Batch(pk=pk, content_key="a" * 64)) for pk in (17, 70)}
    for folder in own | others:
        folder.mkdir()

    assert set(table_files.tables_folders(7)) == own
