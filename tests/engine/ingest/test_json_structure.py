"""Structural problems reject a JSON batch, each error naming the record and field."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import settings as examples
from hypothesis import strategies as st

from reviews.engine.ingest import UploadedFile
from reviews.orchestration.store.parsed import parse  # the settings decide the limits
from tests.engine.ingest.helpers import RECEIVED, batch_doc, errors_of, parse_json


def parse_bytes(data: bytes):
    return parse([UploadedFile("batch.json", data)], as_of=None, received_at=RECEIVED)


def test_json_not_json_names_position():
    assert errors_of(parse_bytes, b"") == ["batch.json: the file is empty (0 bytes)"]
    assert errors_of(parse_bytes, b"#") == ["not JSON: Expecting value at line 1 column 1"]
    assert errors_of(parse_bytes, b'{"companies": [}') == [
        "not JSON: Expecting value at line 1 column 16"
    ]
    # The standard library's message ends in "at" here: said once.
    assert errors_of(parse_bytes, b'{"id": "a\x00b"}') == [
        "not JSON: Invalid control character at line 1 column 10"
    ]


def test_json_not_utf8_is_refused():
    data = '{"companies": [], "contacts": [], "deals": [], "id": "Café"}'.encode("latin-1")
    assert errors_of(parse_bytes, data) == ["not UTF-8: byte 0xe9 at position 57"]


def test_json_not_utf8_position_counts_the_bom():
    assert errors_of(parse_bytes, b"\xef\xbb\xbf{\xff}") == ["not UTF-8: byte 0xff at position 4"]


def test_json_utf8_bom_is_accepted():
    batch = parse_bytes(b'\xef\xbb\xbf{"companies": [], "contacts": [], "deals": []}')

    assert batch.counts == {"companies": 0, "contacts": 0, "deals": 0}


def test_json_top_level_must_be_object():
    assert errors_of(parse_json, [1, 2]) == [
        "not a batch: the top level is a JSON array, not an object"
    ]


def test_json_missing_lists_each_named():
    assert errors_of(parse_json, {}) == [
        "companies: missing list",
        "contacts: missing list",
        "deals: missing list",
    ]


def test_json_null_list_is_missing_and_wrong_type_is_named():
    doc = batch_doc(contacts=None, deals={"id": "dl_1"})

    assert errors_of(parse_json, doc) == [
        "contacts: missing list",
        'deals: not a list: {"id": "dl_1"}',
    ]


def test_json_empty_lists_are_a_valid_batch():
    batch = parse_json(batch_doc())

    assert batch.counts == {"companies": 0, "contacts": 0, "deals": 0}


def test_json_record_not_an_object():
    doc = batch_doc(companies=[{"id": "co_1"}, "co_2"])

    assert errors_of(parse_json, doc) == ['companies[1]: not an object: "co_2"']


def test_json_id_missing_null_empty_blank_and_not_string():
    deals = [{"id": "dl_0"}, {"name": "x"}, {"id": None}, {"id": ""}, {"id": "  "}, {"id": 42}]

    assert errors_of(parse_json, batch_doc(deals=deals)) == [
        "deals[1].id: missing",
        "deals[2].id: missing",
        "deals[3].id: missing",
        "deals[4].id: missing",
        "deals[5].id: not a string: 42",
    ]


def test_json_duplicate_id_names_first_occurrence():
    companies = [{"id": f"co_{i}"} for i in range(7)] + [{"id": "co_2"}]

    assert errors_of(parse_json, batch_doc(companies=companies)) == [
        'companies[7].id: duplicate of companies[2] ("co_2")'
    ]


def test_json_same_id_in_different_lists_is_fine():
    doc = batch_doc(companies=[{"id": "x"}], contacts=[{"id": "x"}], deals=[{"id": "x"}])

    assert parse_json(doc).counts == {"companies": 1, "contacts": 1, "deals": 1}


def test_json_every_error_listed_at_once():
    doc = {
        "exportedAt": "yesterday",
        "companies": [{"id": "co_1"}, {"id": "co_1"}],
        "contacts": [{}],
    }

    assert errors_of(parse_json, doc) == [
        'exportedAt: not a date: "yesterday"',
        'companies[1].id: duplicate of companies[0] ("co_1")',
        "contacts[0].id: missing",
        "deals: missing list",
    ]


def test_json_errors_capped_with_count_of_the_rest(settings):
    settings.MAX_REPORTED_ERRORS = 3
    deals = [{"name": f"deal {i}"} for i in range(5)]

    assert errors_of(parse_json, batch_doc(deals=deals)) == [
        "deals[0].id: missing",
        "deals[1].id: missing",
        "deals[2].id: missing",
        "and 2 more errors (only the first 3 are listed)",
    ]


def test_json_batch_id_and_source_must_be_strings():
    assert errors_of(parse_json, batch_doc(id=7, source=["hubspot"])) == [
        "id: not a string: 7",
        'source: not a string: ["hubspot"]',
    ]


def test_json_pipelines_structure_errors():
    pipelines = [
        {"id": "default", "stages": [{"id": "a"}, {"id": "a"}, {"label": "B"}, "c"]},
        {"id": "default", "stages": []},
        {"id": "sales"},
        {"id": "ops", "label": 5, "stages": [{"id": "won", "closed": "yes"}]},
        [],
    ]

    assert errors_of(parse_json, batch_doc(pipelines=pipelines)) == [
        'pipelines[0].stages[1].id: duplicate of pipelines[0].stages[0] ("a")',
        "pipelines[0].stages[2].id: missing",
        'pipelines[0].stages[3]: not an object: "c"',
        'pipelines[1].id: duplicate of pipelines[0] ("default")',
        "pipelines[2].stages: missing list",
        "pipelines[3].label: not a string: 5",
        'pipelines[3].stages[0].closed: not a boolean: "yes"',
        "pipelines[4]: not an object: []",
    ]


def test_json_pipelines_not_a_list():
    assert errors_of(parse_json, batch_doc(pipelines={"default": []})) == [
        'pipelines: not a list: {"default": []}'
    ]


def test_json_long_values_are_cut_in_messages():
    errors = errors_of(parse_json, batch_doc(deals="x" * 500))

    assert errors == ['deals: not a list: "' + "x" * 58 + "…"]


def expected_errors(name: str, records: list) -> list[str]:
    """The structural errors of one list as docs/input.md states them, a record at a
    time in the list's order: not an object, a missing id, an id an earlier record has."""
    first: dict[str, int] = {}
    found = []
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            found.append(f"{name}[{index}]: not an object: {json.dumps(record)}")
        elif not record.get("id"):
            found.append(f"{name}[{index}].id: missing")
        elif first.setdefault(record["id"], index) != index:
            found.append(
                f'{name}[{index}].id: duplicate of {name}[{first[record["id"]]}] ("{record["id"]}")'
            )
    return found


# Ids from a few values, so duplicates come in any order (ascending or not), beside records
# that are not objects or have no id.
list_items = st.one_of(
    st.builds(lambda i: {"id": f"co_{i}"}, st.integers(0, 6)),
    st.just({"name": "no id"}),
    st.integers(0, 9),
)


@examples(max_examples=300, deadline=None)
@given(st.lists(list_items, max_size=14))
def test_json_structural_errors_come_in_the_lists_order(companies):
    doc = batch_doc(companies=companies)
    want = expected_errors("companies", companies)

    if want:
        assert errors_of(parse_json, doc) == want
    else:
        assert len(parse_json(doc).companies) == len(companies)


def test_json_errors_past_the_cap_keep_the_lists_order(settings):
    settings.MAX_REPORTED_ERRORS = 2
    companies = [{"id": "b"}, {"id": "a"}, 7, {"id": "b"}, {}, {"id": "a"}]

    assert errors_of(parse_json, batch_doc(companies=companies)) == [
        "companies[2]: not an object: 7",
        'companies[3].id: duplicate of companies[0] ("b")',
        "and 2 more errors (only the first 2 are listed)",
    ]
