"""A parsed batch kept with its tables reads back equal to its parse
(reviews/engine/tables/records.py): every record, every kept field, everything the
Batch holds beside them, and the same review, byte for byte, as the golden recordings."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from reviews.engine.batch import Batch
from reviews.engine.ingest import Limits, UploadedFile, parse_upload
from reviews.engine.ingest.errors import IngestError
from reviews.engine.tables.build import OBJECTS, build_tables
from reviews.engine.tables.store import META, read_parsed, write_parquet
from tests.engine.golden_lines import RECEIVED, differences, read_lines, review_lines
from tests.engine.test_golden import GOLDEN, SAMPLES

_DERIVED = {"_stages", "derived", "_pipeline_keys", "extras"}


def parsed(name: str) -> Batch | None:
    files, as_of = SAMPLES[name]()
    uploads = [UploadedFile(n, data) for n, data in files]
    try:
        return parse_upload(uploads, as_of=as_of, received_at=RECEIVED, limits=Limits())
    except IngestError:
        return None  # a rejected sample has no tables


def kept_and_read(batch: Batch, folder) -> Batch:
    write_parquet(build_tables(batch), folder, batch)
    found = read_parsed(folder)
    assert found is not None, "the batch was kept without its records"
    return found


def assert_same_batch(read: Batch, batch: Batch) -> None:
    for spec in dataclasses.fields(Batch):
        if spec.name not in _DERIVED:
            assert getattr(read, spec.name) == _listed(getattr(batch, spec.name)), spec.name
    for name in OBJECTS:
        for before, after in zip(getattr(batch, name), getattr(read, name), strict=True):
            assert batch.extra_of(before) == read.extra_of(after), (name, before.id)
            assert list(batch.extra_of(before)) == list(read.extra_of(after))  # key order


def _listed(value: object) -> object:
    """The one thing a table cannot tell: an empty `companyIds` given ([]) from none
    given (the field's default, ()). Both are empty to every reader (and to the cache
    key, which writes both as []); the table reads back the default."""
    if isinstance(value, list):
        return [
            dataclasses.replace(r, company_ids=()) if getattr(r, "company_ids", None) == [] else r
            for r in value
        ]
    return value


@pytest.mark.parametrize("name", [n for n in SAMPLES if parsed(n) is not None])
def test_each_sample_reads_back_as_parsed_and_is_reviewed_as_recorded(name, tmp_path):
    batch = parsed(name)
    read = kept_and_read(batch, tmp_path / "tables")
    assert_same_batch(read, batch)
    difference = differences(read_lines(GOLDEN / f"{name}.jsonl"), review_lines(read))
    assert not difference, difference


def test_what_the_tables_cannot_say_is_kept_exactly(tmp_path):
    batch = {
        "exportedAt": "2026-03-01T10:00:00+02:00",
        "companies": [
            {"id": "co_1", "name": "Acme", "employees": "123", "rank": 123, "tags": ["a"]},
            {"id": "co_2", "name": "Beta", "employees": None, "enrichedAt": 1767225600123},
        ],
        "contacts": [
            {"id": "ct_1", "email": "a@acme.example", "companyIds": []},
            {"id": "ct_2", "email": "b@acme.example"},
        ],
        "deals": [
            {"id": "dl_1", "amount": "410000.00", "closeDate": "2026-02-30", "stage": "x"},
            {"id": "dl_2", "amount": 1e3, "currency": "eur", "contactIds": ["ct_1"]},
            {"id": "dl_3", "amount": "12.5k"},
        ],
    }
    data = json.dumps(batch).encode()
    parse = parse_upload(
        [UploadedFile("b.json", data)], as_of=None, received_at=RECEIVED, limits=Limits()
    )
    read = kept_and_read(parse, tmp_path / "tables")
    assert_same_batch(read, parse)
    assert read.contacts[0].company_ids == ()  # given as []: _listed
    amounts = [str(deal.amount) for deal in read.deals]
    assert amounts == ["410000.00", "1000.0", "None"]  # the text, not DECIMAL(38, 6)'s
    assert read.extra_of(read.companies[0]) == {"employees": "123", "rank": 123, "tags": ["a"]}
    assert read.extra_of(read.companies[1]) == {"employees": None}
    assert read.companies[1].enriched_at == datetime(2026, 1, 1, 0, 0, 0, 123000, tzinfo=UTC)
    assert read.as_of == datetime(2026, 3, 1, 8, tzinfo=UTC)
    assert [p.path for p in read.value_problems] == ["deals[0].closeDate", "deals[2].amount"]


def test_unstorable_text_reads_back_as_the_parse_made_it_storable(tmp_path):
    data = (
        b'{"companies": [{"id": "co_\\u0000", "name": "A\\ud800", "note": "\\udc80x"}],'
        b' "contacts": [], "deals": []}'
    )
    parse = parse_upload(
        [UploadedFile("b.json", data)], as_of=None, received_at=RECEIVED, limits=Limits()
    )
    assert_same_batch(kept_and_read(parse, tmp_path / "tables"), parse)


def test_kept_fields_that_would_not_read_back_keep_the_batch_to_its_upload(tmp_path):
    # NaN is read by the standard library's parse (msgspec refuses it), kept as a float
    # that no JSON text gives back: the tables are kept, the records are not.
    data = b'{"companies": [{"id": "co_1", "score": NaN}], "contacts": [], "deals": []}'
    parse = parse_upload(
        [UploadedFile("b.json", data)], as_of=None, received_at=RECEIVED, limits=Limits()
    )
    folder = tmp_path / "tables"
    write_parquet(build_tables(parse), folder, parse)
    assert (folder / META).exists()
    assert read_parsed(folder) is None


def test_tables_kept_without_their_batch_are_not_read_as_one(tmp_path):
    parse = parsed("full")
    write_parquet(build_tables(parse), tmp_path / "tables")
    assert read_parsed(tmp_path / "tables") is None
    assert read_parsed(tmp_path / "nothing") is None


def test_a_read_back_batch_shares_its_repeated_values(tmp_path):
    # As the parse does: a million records carry a few thousand distinct dates.
    parse = parsed("generated-2000-3")
    read = kept_and_read(parse, tmp_path / "tables")
    dates = {id(c.updated_at) for c in read.companies if c.updated_at}
    assert len(dates) == len({c.updated_at for c in read.companies if c.updated_at})
    assert all(isinstance(d.amount, Decimal) for d in read.deals if d.amount is not None)
