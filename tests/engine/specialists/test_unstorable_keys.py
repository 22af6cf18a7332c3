"""A NUL or lone surrogate in one copy never changes a match: comparison keys are made
without them (and without the escape text ingest shows them as), while the stored
value keeps them, escaped and visible. Read from uploaded bytes, as they arrive."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from reviews.engine import normalize
from reviews.engine.ingest import UploadedFile, parse_upload
from reviews.engine.specialists import dedup
from tests.engine.specialists.test_dedup import RULES

RECEIVED = datetime(2026, 8, 2, 12, 0, tzinfo=UTC)
HOSTILE = ["\x00", "\udc80", "\ud800", "\x00\x00"]


def parsed(doc: dict):
    data = json.dumps(doc).encode()  # NUL and surrogates as \u escapes, as JSON sends them
    return parse_upload([UploadedFile("batch.json", data)], as_of=None, received_at=RECEIVED)


def kinds(batch) -> list[str]:
    return sorted(f.kind for f in dedup.detect(batch, RULES))


def deal(id: str, name: str) -> dict:
    return {
        "id": id,
        "name": name,
        "amount": "48000",
        "stage": "contractsent",
        "closeDate": "2026-09-30",
        "companyId": "co_1",
    }


@pytest.mark.parametrize("char", HOSTILE)
@pytest.mark.parametrize("where", ["end", "middle-of-word", "start"])
def test_deal_entered_twice_is_found_with_a_hostile_character_in_one_copy(char, where):
    name = {
        "end": f"Renewal 2026{char}",
        "middle-of-word": f"Rene{char}wal 2026",
        "start": f"{char}Renewal 2026",
    }[where]
    batch = parsed(
        {
            "companies": [{"id": "co_1", "name": "Acme"}],
            "contacts": [],
            "deals": [deal("dl_1", "Renewal 2026"), deal("dl_2", name)],
        }
    )

    found = [f for f in dedup.detect(batch, RULES) if f.kind == "deal_entered_twice"]

    assert [f.record_ids for f in found] == [["dl_1", "dl_2"]]
    assert "\\u" in batch.deals[1].name  # the stored value keeps it, escaped


def test_hostile_characters_do_not_make_different_deals_one():
    batch = parsed(
        {
            "companies": [{"id": "co_1", "name": "Acme"}],
            "contacts": [],
            "deals": [deal("dl_1", "Renewal 2025\x00"), deal("dl_2", "Renewal 2026")],
        }
    )

    assert "deal_entered_twice" not in kinds(batch)


@pytest.mark.parametrize("char", HOSTILE)
def test_companies_and_contacts_match_with_a_hostile_character_in_one_copy(char):
    batch = parsed(
        {
            "companies": [
                {"id": "co_1", "name": "Vertex Robotics", "domain": "vertex.example"},
                {"id": "co_2", "name": "Other", "domain": f"vertex.example{char}"},
                {"id": "co_3", "name": "Harbor Freight", "domain": "harbor.example"},
                {"id": "co_4", "name": f"Harbor{char} Freight", "domain": "freight.example"},
            ],
            "contacts": [
                {"id": "ct_1", "firstName": "Dana", "lastName": "Kim", "companyId": "co_1"},
                {"id": "ct_2", "firstName": f"Dana{char}", "lastName": "Kim", "companyId": "co_1"},
            ],
            "deals": [],
        }
    )

    assert {"company_same_domain", "company_same_name", "contact_same_person"} <= set(kinds(batch))


def test_a_nul_in_a_csv_deal_name_still_matches():
    header = b"Record ID,Deal Name,Amount,Deal Stage,Close Date,Associated Company IDs (Primary)\n"
    rows = b"1,Renewal 2026,48000,contractsent,2026-09-30,7\n"
    rows += b"2,Renewal 2026\x00,48000,contractsent,2026-09-30,7\n"
    batch = parse_upload(
        [UploadedFile("deals.csv", header + rows)], as_of=None, received_at=RECEIVED
    )

    assert "deal_entered_twice" in kinds(batch)


@pytest.mark.parametrize(
    ("value", "key"),
    [
        ("Renewal 2026\\u0000", "renewal 2026"),
        ("Renewal 2026\x00", "renewal 2026"),
        ("Re\\udc80newal 2026", "renewal 2026"),
        ("Caf\u00e9\ud800 2026", "cafe 2026"),
        ("Renewal 2026", "renewal 2026"),
    ],
)
def test_comparison_keys_leave_out_unstorable_characters_and_their_escapes(value, key):
    assert normalize.text(value) == key
