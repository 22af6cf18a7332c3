"""The value parsers on their own: typed value, None for missing, Invalid otherwise."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

from reviews.engine.ingest import UploadedFile, parse_upload
from reviews.engine.ingest.values import (
    Invalid,
    describe,
    parse_amount,
    parse_date,
    parse_datetime,
    parse_id_list,
    parse_text,
)
from tests.engine.ingest.helpers import RECEIVED

SEED = Path(__file__).resolve().parents[2] / "data" / "seed-example.json"


def messages(results: list) -> list:
    return [r.message if isinstance(r, Invalid) else r for r in results]


def test_amount_accepted_forms():
    values = ["+5", ".5", "5.", "007", Decimal("1.10"), 10**11]

    assert [parse_amount(v) for v in values] == [
        Decimal(5),
        Decimal("0.5"),
        Decimal(5),
        Decimal(7),
        Decimal("1.10"),
        Decimal(10**11),
    ]


def test_amount_rejected_forms():
    values = ["-", ".", "1.2.3", "1_000", "٣", float("inf"), Decimal("NaN"), [1], {"v": 1}]

    assert messages([parse_amount(v) for v in values]) == [
        'not a number: "-"',
        'not a number: "."',
        'not a number: "1.2.3"',
        'not a number: "1_000"',
        'not a number: "٣"',
        "not a number: Infinity",
        'not a number: "NaN"',
        "not a number: [1]",
        'not a number: {"v": 1}',
    ]


def test_amount_missing_forms():
    assert [parse_amount(v) for v in (None, "", "   ")] == [None, None, None]


def test_datetime_rarer_iso_forms_via_dateutil():
    assert parse_datetime("2026-W31-5") == datetime(2026, 7, 31, tzinfo=UTC)


def test_datetime_out_of_range_values_are_invalid():
    values = ["0001-01-01T00:00:00+01:00", 10**20, float("nan"), "-5"]

    assert messages([parse_datetime(v) for v in values]) == [
        'not a date: "0001-01-01T00:00:00+01:00"',
        "not a date: 100000000000000000000",
        "not a date: NaN",
        'not a date: "-5"',
    ]


def test_date_of_negative_epoch_milliseconds():
    assert parse_date(-86_400_000) == date(1969, 12, 31)


def test_text_blank_is_missing_and_kept_as_given_otherwise():
    assert [parse_text(v) for v in ("", " \t", None, " Acme ")] == [None, None, None, " Acme "]


def test_id_list_blank_entries_skipped():
    assert parse_id_list(["a", "", " ", None, "b"]) == ["a", "b"]
    assert parse_id_list("") is None


def test_describe_quotes_strings_and_cuts_long_values():
    assert [describe("x"), describe(1.5), describe(None), describe("é" * 100)] == [
        '"x"',
        "1.5",
        "null",
        '"' + "é" * 58 + "…",
    ]


def test_seed_example_parses_cleanly():
    batch = parse_upload(
        [UploadedFile(SEED.name, SEED.read_bytes())], as_of=None, received_at=RECEIVED
    )

    assert (batch.id, batch.counts, batch.value_problems) == (
        "seed-example",
        {"companies": 2, "contacts": 2, "deals": 1},
        [],
    )
