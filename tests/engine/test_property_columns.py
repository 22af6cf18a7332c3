"""Every other property as a column (tables/build.py `_properties`), made a chunk of
records and a column at a time: the same columns, in the same order, with the same
texts and the same names left out as the record-by-record definition, across chunk
boundaries, from the JSON reader's kept fields and from records' own dicts alike."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviews.engine import extra_fields
from reviews.engine.extra_fields import NO_EXTRA, ExtraFields
from reviews.engine.tables import build
from tests.engine.specialists.factories import company, make_batch

# Names that fold onto each other and onto documented columns ("Name", "DOMAIN").
KEYS = st.sampled_from(["tier", "Tier", "TIER", "Name", "DOMAIN", "region", "score", "ß"])
VALUES = st.one_of(
    st.none(),
    st.text(max_size=5),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)
RECORDS = st.lists(st.dictionaries(KEYS, VALUES, max_size=4), max_size=12)
EXPORT_COLUMNS = st.lists(KEYS, max_size=3, unique=True)


def record_by_record(
    fields_of: list[dict[str, Any]], names: list[str], taken: set[str]
) -> tuple[dict, list]:
    """The definition: each record's properties in turn, a column claimed where its
    name first comes, padded for every record without it."""
    extras: dict[str, list] = {}
    left_out: list[str] = []
    for key in names:
        if key.casefold() in taken:
            left_out.append(key)
        else:
            taken.add(key.casefold())
            extras[key] = []
    for row, fields in enumerate(fields_of):
        for key, value in fields.items():
            column = extras.get(key)
            if column is None:
                if key.casefold() in taken:
                    left_out.append(key)
                    continue
                taken.add(key.casefold())
                column = extras[key] = [None] * row
            column.append(build.property_text(value))
        for column in extras.values():
            if len(column) <= row:
                column.append(None)
    return extras, sorted(set(left_out))


def taken() -> set[str]:
    return {column.casefold() for column in build.typed_columns("companies")}


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(extra_fields, "CHUNK", 5)
    monkeypatch.setattr(build, "CHUNK", 5)


@settings(max_examples=150, deadline=None)
@given(RECORDS, EXPORT_COLUMNS)
def test_kept_fields_become_the_same_columns(records, names):
    kept = ExtraFields()
    for index, fields in enumerate(records):
        kept.add(index, fields)
    companies = [company(f"co_{i}", index=i, extra=NO_EXTRA) for i in range(len(records))]
    batch = make_batch(companies, extras={"companies": kept})
    batch.property_names = {"companies": names}

    found = build._properties(batch, "companies", batch.companies, taken())

    decoded = [kept.get(index) for index in range(len(records))]
    assert found == record_by_record(decoded, names, taken())


@settings(max_examples=150, deadline=None)
@given(RECORDS, EXPORT_COLUMNS)
def test_records_own_fields_become_the_same_columns(records, names):
    companies = [company(f"co_{i}", index=i, extra=dict(f)) for i, f in enumerate(records)]
    batch = make_batch(companies)
    batch.property_names = {"companies": names}

    found = build._properties(batch, "companies", batch.companies, taken())

    assert found == record_by_record(records, names, taken())


def test_a_replaced_record_is_read_as_replaced_in_its_chunk():
    kept = ExtraFields()
    for index in range(12):
        kept.add(index, {"tier": index})
    kept.replace(7, {"tier": "cleaned"})

    chunks = list(kept.chunks(14))  # two records past the last one kept

    assert [len(chunk) for chunk in chunks] == [5, 5, 4]
    flat = [fields for chunk in chunks for fields in chunk]
    assert flat[7] == {"tier": "cleaned"}
    assert flat[:7] + flat[8:12] == [{"tier": i} for i in range(12) if i != 7]
    assert flat[12:] == [{}, {}]
