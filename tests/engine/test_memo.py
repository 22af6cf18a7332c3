"""One result per distinct value (reviews/engine/memo.py): the tables' columns and the
parse's repeated fields share one memo."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from reviews.engine.ingest.json_batch import parse_json_batch
from reviews.engine.ingest.records import DEALS, field_parsers
from reviews.engine.memo import Remembered, once_each


def test_once_each_converts_each_distinct_value_once_and_keeps_none():
    converted = []

    def double(value: int) -> int:
        converted.append(value)
        return value * 2

    assert once_each(double, iter([3, None, 3, 4, 3])) == [6, None, 6, 8, 6]
    assert converted == [3, 4]


def test_remembered_converts_on_first_lookup_only():
    memo = Remembered(str.upper)
    assert memo["won"] == "WON"
    assert memo["won"] is memo["won"]
    assert memo == {"won": "WON"}


def test_repeated_field_parsed_once_per_distinct_text_or_integer():
    parsed = []

    def parse(value: object) -> str:
        parsed.append(value)
        return f"parsed {value!r}"

    plan = {key: parse_once for key, _, parse_once, _ in field_parsers(DEALS, {"stage": parse})}
    values = ["won", 1, "won", 1.0, True, 1, ["won"], ["won"]]
    assert [plan["stage"](value) for value in values] == [
        "parsed 'won'",
        "parsed 1",
        "parsed 'won'",
        "parsed 1.0",  # equal to 1, but not the int's result
        "parsed True",
        "parsed 1",
        "parsed ['won']",  # no hash: parsed each time
        "parsed ['won']",
    ]
    assert parsed == ["won", 1, 1.0, True, ["won"], ["won"]]


def test_contacts_share_one_string_per_distinct_name():
    # Names repeat across a CRM's people: the parse keeps one string per distinct name,
    # built here from separate bytes so equal texts start as separate objects.
    people = [{"id": f"c{n}", "firstName": "Dana", "lastName": f"Kim{n % 2}"} for n in range(4)]
    batch = parse_json_batch(
        json.dumps({"companies": [], "contacts": people, "deals": []}).encode(),
        as_of=None,
        received_at=datetime(2026, 11, 28, tzinfo=UTC),
        max_errors=10,
    )
    first, *others = batch.contacts
    assert [c.first_name for c in batch.contacts] == ["Dana"] * 4
    assert all(other.first_name is first.first_name for other in others)
    assert batch.contacts[2].last_name is first.last_name == "Kim0"
    assert batch.contacts[1].last_name is not first.last_name
