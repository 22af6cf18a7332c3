"""ExtraFields: the unread fields of a list's records kept as JSON text in one buffer."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from reviews.engine.batch import _LIST_NAMES
from reviews.engine.extra_fields import ExtraFields, canonical_text, lengths_and_texts
from reviews.engine.ingest.records import COMPANIES, CONTACTS, DEALS, LEADS

# What msgspec decodes: the only values the native reader keeps here.
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
records = st.lists(st.dictionaries(st.text(), json_values, max_size=4), max_size=6)


@given(records)
def test_every_record_reads_back_what_was_kept(fields_by_index):
    kept = ExtraFields()
    for index, fields in enumerate(fields_by_index):
        kept.add(index, fields)
    assert [kept.get(i) for i in range(len(fields_by_index))] == fields_by_index


def test_a_refused_record_between_two_keeps_nothing_and_shifts_nothing():
    kept = ExtraFields()
    kept.add(0, {"industry": "X"})
    kept.add(3, {"country": "US"})  # 1 and 2: refused by the reader
    assert [kept.get(i) for i in range(5)] == [{"industry": "X"}, {}, {}, {"country": "US"}, {}]
    assert kept.get(-1) == {}


def test_text_is_canonical_whatever_the_key_order():
    one, other = ExtraFields(), ExtraFields()
    one.add(0, {"b": 1, "a": {"d": 2, "c": 3}})
    other.add(0, {"a": {"c": 3, "d": 2}, "b": 1})
    assert one.json(0) == other.json(0) == b'{"a":{"c":3,"d":2},"b":1}'
    assert one.json(1) == b"{}"


def test_replace_wins_over_the_text_and_get_hands_out_copies():
    kept = ExtraFields()
    kept.add(0, {"notes": "a\x00b"})
    kept.replace(0, {"notes": "a\\u0000b"})
    assert kept.get(0) == {"notes": "a\\u0000b"}
    assert kept.json(0) == b'{"notes":"a\\\\u0000b"}'
    kept.get(0)["notes"] = "changed"
    assert kept.get(0) == {"notes": "a\\u0000b"}


def _hashed(chunks) -> list[tuple[list[int], bytes]]:
    return [(lengths.tolist(), bytes(texts)) for lengths, texts in chunks]


@given(records, st.integers(min_value=1, max_value=4), st.booleans())
def test_texts_from_the_buffer_are_the_texts_record_by_record(fields_by_index, size, replace):
    # The cache key hashes these: every record in index order comes straight from the
    # buffer; any other order, or a replaced record, is read record by record.
    kept = ExtraFields()
    for index, fields in enumerate(fields_by_index):
        kept.add(index, fields)
    if replace and fields_by_index:
        fields_by_index[0] = {"notes": "cleaned"}
        kept.replace(0, fields_by_index[0])
    order = list(range(len(fields_by_index)))
    expected = [
        lengths_and_texts([canonical_text(fields_by_index[i]) for i in order[start : start + size]])
        for start in range(0, len(order), size)
    ]
    assert _hashed(kept.texts(order, size)) == _hashed(expected)
    backwards = order[::-1]
    assert b"".join(t for _, t in kept.texts(backwards, size)) == b"".join(
        canonical_text(fields_by_index[i]) for i in backwards
    )


def test_texts_of_a_record_without_fields_are_empty_and_counted():
    kept = ExtraFields()
    kept.add(0, {"industry": "X"})
    kept.add(2, {})  # 1: refused by the reader; 3: added nothing, nor did any after it
    assert _hashed(kept.texts([0, 1, 2, 3], 10)) == [([16, 0, 0, 0], b'{"industry":"X"}')]
    assert _hashed(ExtraFields().texts([0, 1], 1)) == [([0], b""), ([0], b"")]


def test_the_batch_finds_a_records_kept_fields_under_its_readers_list_name():
    # Batch.extra_of maps a record's class to the list name the reader keys them by.
    assert _LIST_NAMES == {kind.make: kind.name for kind in (COMPANIES, CONTACTS, DEALS, LEADS)}
