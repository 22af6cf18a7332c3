"""An `invalid_value` finding's title names the record (its name and id), the field and the
bad value, as every other title names its records: an analyst searching for the deal
finds it. The detail keeps the path in the file (`deals[6].amount`), which the fix plan
reads the object type from."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from reviews.engine.ingest import UploadedFile, parse_upload
from reviews.engine.rules import Rules
from reviews.engine.specialists import MODULES

RECEIVED = datetime(2026, 8, 2, 12, 0, tzinfo=UTC)


def invalid_values(doc: dict) -> dict[str, tuple[str, str]]:
    """record id ("" for the batch's own fields) -> (title, detail) of its invalid_value."""
    batch = parse_upload(
        [UploadedFile("batch.json", json.dumps(doc).encode())], as_of=None, received_at=RECEIVED
    )
    found = [f for m in MODULES for f in m.detect(batch, Rules()) if f.kind == "invalid_value"]
    return {(f.record_ids or [""])[0]: (f.title, f.detail) for f in found}


def test_titles_name_the_record_the_field_and_the_bad_value():
    filler = [{"id": f"dl_{n}", "name": f"Deal {n}", "amount": 100} for n in range(6)]
    found = invalid_values(
        {
            "exportedAt": "2026-08-01T09:00:00Z",
            "companies": [{"id": "co_1", "name": "Fabrikam", "domain": "n/a"}],
            "contacts": [
                {"id": "ct_1", "firstName": "Dana", "lastName": "Kim", "email": "dana"},
                {"id": "ct_2", "email": "owen(at)fabrikam"},  # no name: the id alone
            ],
            "deals": [*filler, {"id": "dl_7", "name": "Fabrikam renewal", "amount": "41O000"}],
        }
    )
    assert found["dl_7"] == (
        'Invalid amount on deal "Fabrikam renewal" (dl_7): not a number: "41O000"',
        'deals[6].amount: not a number: "41O000"',
    )
    assert found["co_1"][0] == 'Invalid domain on company Fabrikam (co_1): not a domain: "n/a"'
    assert found["ct_1"][0] == 'Invalid email on contact Dana Kim (ct_1): not an email: "dana"'
    assert found["ct_2"][0] == ('Invalid email on contact ct_2: not an email: "owen(at)fabrikam"')
    for title, _ in found.values():
        assert "[" not in title  # no list index: the record is named instead


def test_an_unknown_field_with_unstorable_text_is_named_by_its_key():
    found = invalid_values(
        {"companies": [], "contacts": [], "deals": [{"id": "dl_1", "name": "Pilot",
                                                    "notes": "a\u0000b"}]}
    )  # fmt: skip
    title, detail = found["dl_1"]
    assert title.startswith('Invalid notes on deal "Pilot" (dl_1): holds a character')
    assert detail.startswith("deals[0].notes: ")


def test_a_batch_level_value_names_the_batch():
    lists = {"companies": [], "contacts": [], "deals": []}
    found = invalid_values({"source": "hub\u0000spot", **lists})
    title, _ = found[""]
    assert title.startswith("Invalid source of the batch: holds a character")
