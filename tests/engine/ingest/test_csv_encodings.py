"""CSV exports in the encodings Excel and HubSpot write (docs/input.md, "Encodings"):
UTF-8 with and without a byte-order mark, UTF-16 with one (Excel's "Unicode text",
tab-separated), cp1252 and Latin-1, detected or stated (CSV_ENCODING), give the same
records as UTF-8; a byte that is text in none of them is named by line and column."""

from __future__ import annotations

import codecs
import csv
import io
import subprocess
import sys

import pytest

from tests.engine.ingest.helpers import errors_of, parse_files
from tests.engine.ingest.hubspot_exports import csv_files
from tests.services import ROOT


def records(batch) -> tuple:
    return (batch.companies, batch.contacts, batch.deals, batch.value_problems, batch.as_of)


def as_tabs(text: str) -> str:
    out = io.StringIO()
    rows = csv.reader(io.StringIO(text, newline=""), delimiter=_delimiter(text))
    csv.writer(out, delimiter="\t", lineterminator="\r\n").writerows(rows)
    return out.getvalue()


def _delimiter(text: str) -> str:
    return ";" if text.split("\n", 1)[0].count(";") > 1 else ","


WRITERS = {
    "utf-8": lambda text: text.encode("utf-8"),
    "utf-8 with BOM": lambda text: codecs.BOM_UTF8 + text.encode("utf-8"),
    "utf-16le unicode text": lambda text: codecs.BOM_UTF16_LE + as_tabs(text).encode("utf-16-le"),
    "utf-16be unicode text": lambda text: codecs.BOM_UTF16_BE + as_tabs(text).encode("utf-16-be"),
    "cp1252": lambda text: text.encode("cp1252"),
}


@pytest.mark.parametrize("style", ["hubspot", "excel_us", "excel_de"])
@pytest.mark.parametrize("encoding", list(WRITERS))
def test_each_encoding_gives_the_records_utf8_gives(style, encoding):
    # The exports hold é, ü, "—" and "€" (excel_de), all of them in cp1252.
    exports = [(name, data.decode("utf-8-sig")) for name, data in csv_files(style=style)]
    assert any(not text.isascii() for _, text in exports)
    utf8 = parse_files(*[(name, text.encode()) for name, text in exports])

    encoded = parse_files(*[(name, WRITERS[encoding](text)) for name, text in exports])

    assert records(encoded) == records(utf8)


LATIN = (
    "Record ID,Company name,Company Domain Name\n1,Café Müller,cafe.example\n2,Ørsted A/S,x.dk\n"
)


def test_latin1_is_read_by_the_cp1252_fallback():
    assert records(parse_files(("companies.csv", LATIN.encode("latin-1")))) == records(
        parse_files(("companies.csv", LATIN.encode()))
    )


def test_an_invalid_utf8_sequence_is_read_as_cp1252_not_refused():
    data = b"Record ID,Deal Name,Amount\n5001,Harbor \xed\xa0\x80renewal,100\n"

    batch = parse_files(("deals.csv", data))

    assert [deal.name for deal in batch.deals] == ["Harbor \u00ed\u00a0\u20acrenewal"]


def test_a_byte_in_none_of_the_encodings_is_named_by_line_and_column():
    data = "Record ID,Deal Name\n5001,Café\n5002,Harbor renewal".encode("cp1252") + b"\x81\n"

    assert errors_of(parse_files, ("deals.csv", data)) == [
        "deals.csv line 3, column 20: byte 0x81 is not text in UTF-8 or in Windows-1252 "
        "(cp1252), the encodings tried; UTF-8 fails first at line 2, column 9; "
        'save it from Excel as "CSV UTF-8", or set CSV_ENCODING to the encoding it is in'
    ]


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (codecs.BOM_UTF8 + b"Record ID,Deal Name\n5001,Caf\xe9\n", "line 2, column 9: byte 0xe9"),
        (
            codecs.BOM_UTF16_LE + "Record ID\tDeal Name\n5001\tx".encode("utf-16-le") + b"\x00\xd8",
            "line 2, column 7: byte 0x00",  # a lone surrogate, U+D800
        ),
    ],
)
def test_a_file_its_byte_order_mark_misdescribes_is_named_by_line_and_column(data, where):
    [error] = errors_of(parse_files, ("deals.csv", data))
    assert error.startswith(f"deals.csv {where} is not UTF-")
    assert "as its byte-order mark says" in error


def test_a_stated_encoding_is_read_without_detection(settings):
    text = "Record ID\tDeal Name\n5001\tCafé — renewal\n"
    settings.CSV_ENCODING = "utf-16-le"  # no byte-order mark: detection would not see it

    batch = parse_files(("deals.txt", text.encode("utf-16-le")))

    assert [(d.id, d.name) for d in batch.deals] == [("5001", "Café — renewal")]


def test_a_stated_encoding_the_file_is_not_in_is_named_by_line_and_column(settings):
    settings.CSV_ENCODING = "utf-8"
    data = b"Record ID,Deal Name\n5001,Harbor \xed\xa0\x80renewal\n"

    assert errors_of(parse_files, ("deals.csv", data)) == [
        "deals.csv line 2, column 13: byte 0xed is not UTF-8 text, the encoding CSV_ENCODING "
        'states; save it from Excel as "CSV UTF-8", or set CSV_ENCODING to the encoding it is in'
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("value", "ok"), [("Latin-1", True), ("UTF-16", True), ("base64", False), ("klingon", False)]
)
def test_the_setting_takes_auto_or_a_text_encoding(value, ok):
    script = (
        f"import os\nos.environ['CSV_ENCODING'] = {value!r}\n"
        "from revreview import settings\nprint(settings.CSV_ENCODING)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    if ok:
        assert result.stdout.strip() == value.lower(), result.stderr
    else:
        assert "ImproperlyConfigured: CSV_ENCODING must be auto or a text encoding" in result.stderr
