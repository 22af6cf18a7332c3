"""Opening a CSV file, as both CSV readers do (hubspot_csv, salesforce.reader): its
header row and an iterator over its other rows, decoded in the encoding found or stated
(encodings.py) from a stream, so the file is never held whole as text (a StringIO
would cost four bytes a character)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

from reviews.engine.ingest.encodings import AUTO, Undecodable, csv_codec
from reviews.engine.ingest.errors import ErrorList

# HubSpot's exports and Excel's re-saves: "," by default, ";" where the decimal mark is a
# comma, tab in Excel's "Unicode text".
DELIMITERS = (",", ";", "\t")
COMMA = (",",)  # Salesforce writes nothing else

Rows = Iterator[list[str]]


def csv_rows(
    name: str,
    data: bytes,
    errors: ErrorList,
    encoding: str = AUTO,
    *,
    delimiters: tuple[str, ...] = DELIMITERS,
) -> tuple[list[str] | None, Rows] | None:
    """(the header row, None for an empty file; the other rows, read as iterated), or
    None when the file cannot be read, with an error naming it added to `errors`: a
    byte that is text in no encoding tried (by line and column), or an unreadable
    header row. The delimiter is the one of `delimiters` the header line holds most.
    A row past the header that breaks the csv module raises csv.Error as it is read."""
    try:
        # Checked whole once, in chunks (encodings.py), to name a bad byte exactly.
        codec = csv_codec(data, encoding)
    except Undecodable as error:
        errors.add(f"{name} {error}")
        return None
    # The codec drops a byte-order mark; newline="" lets the csv module handle CRLF and
    # line breaks inside quoted cells.
    delimiter = delimiters[0]
    if len(delimiters) > 1:
        first_line = io.TextIOWrapper(io.BytesIO(data), encoding=codec, newline="").readline()
        delimiter = delimiter_of(first_line, delimiters)
    stream = io.TextIOWrapper(io.BytesIO(data), encoding=codec, newline="")
    rows = csv.reader(stream, delimiter=delimiter)
    try:
        headers = next(rows, None)
    except csv.Error as error:
        errors.add(f"{name} row 1: unreadable CSV: {error}")
        return None
    return headers, rows


def delimiter_of(header_line: str, delimiters: tuple[str, ...] = DELIMITERS) -> str:
    """The most frequent of `delimiters` on the header line (csv.Sniffer guesses badly
    on short or quoted samples). A tie goes to the first."""
    return max(delimiters, key=header_line.count)
