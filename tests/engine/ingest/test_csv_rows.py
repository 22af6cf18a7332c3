"""One way to open a CSV file for both readers (reviews.engine.ingest.csv_rows): HubSpot's
exports with their delimiter found on the header line, Salesforce's with commas, and
the same errors naming the file for a file neither can read."""

from __future__ import annotations

import codecs
import csv

import pytest

from reviews.engine.ingest import UploadedFile, parse_upload
from reviews.engine.ingest.csv_rows import COMMA, csv_rows
from reviews.engine.ingest.errors import ErrorList, IngestError
from tests.engine.ingest.helpers import RECEIVED


def opened(data: bytes, **options) -> tuple[list[str] | None, list[list[str]], list[str]]:
    errors = ErrorList(10)
    result = csv_rows("deals.csv", data, errors, **options)
    if result is None:
        return None, [], list(errors.messages)
    headers, rows = result
    return headers, list(rows), list(errors.messages)


@pytest.mark.parametrize("delimiter", [",", ";", "\t"])
def test_the_header_lines_delimiter_is_the_files(delimiter):
    text = delimiter.join(["Record ID", "Deal Name", "Amount"]) + "\r\n"
    text += delimiter.join(["1", '"A, B; C"', "410.000,00" if delimiter == ";" else "5"]) + "\r\n"

    headers, rows, errors = opened(codecs.BOM_UTF8 + text.encode())

    assert headers == ["Record ID", "Deal Name", "Amount"]  # the byte-order mark dropped
    assert rows[0][:2] == ["1", "A, B; C"] and errors == []


def test_commas_only_keep_a_semicolon_in_a_header():
    headers, _, _ = opened(b"Id,Name;Alias\n1,x\n", delimiters=COMMA)
    assert headers == ["Id", "Name;Alias"]


def test_an_empty_file_has_no_header_row_and_no_error_yet():
    assert opened(b"") == (None, [], [])


def test_a_byte_in_no_encoding_is_named_by_file_line_and_column():
    headers, _, errors = opened(b"Record ID,Deal Name\n1,\x81\n", encoding="cp1252")
    assert headers is None
    assert errors[0].startswith("deals.csv line 2, column 3")


def test_a_header_row_the_csv_module_cannot_read_is_row_1():
    limit = csv.field_size_limit()
    headers, _, errors = opened(b'"' + b"x" * (limit + 1) + b'"\n')
    assert headers is None
    assert errors == [f"deals.csv row 1: unreadable CSV: field larger than field limit ({limit})"]


@pytest.mark.parametrize(
    ("name", "header"),
    [("deals.csv", b"Record ID,Deal Name\n"), ("Opportunity.csv", b"Id,Name\n")],
    ids=["hubspot", "salesforce"],
)
def test_both_readers_name_a_byte_in_no_encoding_by_file_line_and_column(name, header):
    rows = b"".join(b"0065g00000AbCdE%03d,Deal\n" % (n % 1000) for n in range(4000))
    data = header + rows + b"0065g00000AbCdF,\x81\n"  # past what recognises the file
    with pytest.raises(IngestError) as error:
        parse_upload([UploadedFile(name, data)], as_of=None, received_at=RECEIVED)
    assert str(error.value).startswith(f"{name} line 4,002, column 17")
