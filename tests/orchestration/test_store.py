"""The store of uploads and tables (revreview/store.py), in its two
modes: a local folder (the tests' default) and S3 on a loopback server (s3_store)."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from reviews.engine.tables.store import META
from reviews.models import Batch, BatchFile
from reviews.orchestration.intake.submit import accept, store_upload
from reviews.orchestration.store import tables
from reviews.orchestration.store.blob_store import Source
from reviews.orchestration.store.parsed import forget_parsed, stored_files
from revreview import store
from tests.orchestration.helpers import reviewed_run, seed_batch
from tests.uploads import DATA, upload

pytestmark = pytest.mark.django_db


@pytest.fixture(params=["local", pytest.param("s3", marks=pytest.mark.integration)])
def mode(request, settings, tmp_path) -> str:
    # This machine's cache, the test's own: a rolled-back batch's id comes again.
    settings.TABLES_DIR = tmp_path / "tables"
    if request.param == "s3":
        request.getfixturevalue("s3_store")
    return request.param


def pieces(data: bytes, size: int = 100_000):
    for start in range(0, len(data), size):
        yield data[start : start + size]


def test_bytes_put_in_chunks_come_back_in_chunks_with_their_hash(mode):
    data = os.urandom(3 * 1024 * 1024 + 17)  # past one part, not a whole one
    stored = store.put("t/one", pieces(data), size=len(data), label="one.json")
    assert (stored.key, stored.size) == ("t/one", len(data))
    assert stored.sha256 == hashlib.sha256(data).hexdigest()
    assert b"".join(store.chunks("t/one")) == data
    assert store.read_bytes("t/one") == data


@pytest.mark.parametrize("declared", [10, 1000])
def test_bytes_other_than_declared_are_refused_and_not_kept(mode, declared):
    with pytest.raises(ValueError, match=r"^big\.json: .*declared"):
        store.put("t/wrong", pieces(b"x" * 100, 7), size=declared, label="big.json")
    assert not store.exists("t/wrong")


def test_a_missing_key_says_which(mode):
    with pytest.raises(store.MissingObject, match="'t/nothing'"):
        store.read_bytes("t/nothing")


def test_an_upload_goes_to_the_store_not_the_row(mode):
    batch = store_upload([upload("seed-example.json")])
    row = BatchFile.objects.get(batch=batch)
    assert row.data is None and row.key == store.upload_key(batch.pk, 0)
    assert store.read_bytes(row.key) == (DATA / "seed-example.json").read_bytes()


def test_a_deleted_batch_takes_its_objects_with_it(mode, django_capture_on_commit_callbacks):
    batch = reviewed_run(sync()).batch  # its tables kept too
    prefix = store.batch_prefix(batch.pk)
    stored = store.listing(prefix)
    assert store.upload_key(batch.pk, 0) in stored
    assert tables.tables_key(batch) + META in stored
    assert tables.tables_folder(batch).exists()
    with django_capture_on_commit_callbacks(execute=True):
        Batch.objects.filter(pk=batch.pk).delete()
    assert store.listing(prefix) == []
    assert not tables.tables_folder(batch).exists()
    if mode == "local":  # no empty folders left behind either
        assert not Path(store.backend().path(prefix)).exists()


def test_a_rolled_back_delete_keeps_the_objects(mode, django_capture_on_commit_callbacks):
    batch = store_upload([upload("seed-example.json")])
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        Batch.objects.filter(pk=batch.pk).delete()
    assert len(callbacks) == 1  # run only at a commit, which a rollback never reaches
    assert store.exists(store.upload_key(batch.pk, 0))


def test_a_file_stored_in_its_row_before_the_store_still_reads():
    data = (DATA / "seed-example.json").read_bytes()
    batch = Batch.objects.create(file_name="old.json", sha256="", size_bytes=len(data))
    BatchFile.objects.create(
        batch=batch, name="old.json", sha256=hashlib.sha256(data).hexdigest(),
        size_bytes=len(data), data=data,
    )  # fmt: skip
    assert [(f.name, f.data) for f in stored_files(batch)] == [("old.json", data)]
    parsed = accept(batch)
    assert len(parsed.companies) == Batch.objects.get(pk=batch.pk).counts["companies"] > 0


def test_a_machine_without_the_tables_fetches_them_and_parses_nothing(mode, settings, tmp_path):
    batch = reviewed_run(sync()).batch
    expected = tables.profile_of(batch)
    # Another machine: its own empty cache, and an upload it could not parse (gone).
    settings.TABLES_DIR = tmp_path / "other-machine"
    store.delete(store.upload_key(batch.pk, 0))
    forget_parsed()
    Batch.objects.filter(pk=batch.pk).update(fill_rates={})
    batch.refresh_from_db()
    assert tables.profile_of(batch) == expected
    assert (tables.tables_folder(batch) / META).exists()


def test_tables_built_where_the_store_has_none_are_shared(mode, settings, tmp_path):
    batch = reviewed_run(sync()).batch
    prefix = tables.tables_key(batch)
    store.delete_prefix(prefix)  # as if the first machine could not store them
    shutil.rmtree(tables.tables_folder(batch))
    settings.TABLES_DIR = tmp_path / "second"
    forget_parsed()
    tables.tables_for(batch)  # parsed and built here, then stored
    assert sorted(k.removeprefix(prefix) for k in store.listing(prefix)) == sorted(
        p.name for p in tables.tables_folder(batch).iterdir()
    )


def test_a_source_streamed_by_the_spool_is_stored_whole(mode):
    data = b'{"companies": [], "contacts": [], "deals": []}' * 1000
    source = Source(name="s.json", size=len(data), chunks=lambda: pieces(data, 4096))
    batch = store_upload([source])
    assert store.read_bytes(batch.files.get().key) == data


def sync() -> dict:
    return {**seed_batch(), "dataset": "acme-hubspot"}
