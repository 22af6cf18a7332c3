"""A big JSON file in a ZIP is unpacked to a mapped temporary file (ingest/mapped.py)
and read as the same bytes held in memory would be."""

from __future__ import annotations

import io
import json
import mmap
import tempfile

import pytest

from reviews.engine import ingest
from reviews.engine.ingest.mapped import release_read_pages, unpack_mapped
from reviews.engine.storable import may_hold_unstorable
from reviews.samplegen import generate
from tests.engine.ingest.helpers import parse_files, zipped
from tests.engine.ingest.test_json_records import with_extras


@pytest.fixture
def map_every_json(monkeypatch):
    mapped = []

    def recording(member, budget):
        data = unpack_mapped(member, budget)
        mapped.append(data)
        return data

    monkeypatch.setattr(ingest, "MAP_OVER_BYTES", 0)
    monkeypatch.setattr(ingest, "unpack_mapped", recording)
    return mapped


def test_a_mapped_batch_reads_as_the_same_batch_held_in_memory(map_every_json):
    document, _ = generate(2_000, seed=3, stale_share=0.2)
    document["companies"][5]["notes"] = "nul\x00 inside"  # cleaned the same way too
    data = zipped({"batch.json": json.dumps(document)})

    mapped = parse_files(("sync.zip", data))

    assert [m.__class__ for m in map_every_json] == [mmap.mmap]
    held = parse_files(("batch.json", json.dumps(document)))
    assert with_extras(mapped) == with_extras(held)
    assert "companies[5].notes" in {p.path for p in mapped.value_problems}


def test_released_pages_read_again_from_the_file():
    mapped = unpack_mapped(io.BytesIO(b'{"a": "x\x00"}' * 1000), budget=10**6)

    release_read_pages(mapped)

    assert mapped[:6] == b'{"a": '
    assert may_hold_unstorable(mapped)  # a search of the text, not of one byte
    assert unpack_mapped(io.BytesIO(b""), budget=10) == b""
    with pytest.raises(ingest.TooBig):
        unpack_mapped(io.BytesIO(b"x" * 11), budget=10)


def test_with_no_room_for_the_temporary_file_the_member_is_read_into_memory(
    map_every_json, monkeypatch
):
    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tempfile, "TemporaryFile", disk_full)
    document = {"companies": [{"id": "co_1", "industry": "X"}], "contacts": [], "deals": []}

    batch = parse_files(("sync.zip", zipped({"batch.json": json.dumps(document)})))

    assert map_every_json == []  # nothing mapped
    assert batch.extra_of(batch.companies[0]) == {"industry": "X"}
