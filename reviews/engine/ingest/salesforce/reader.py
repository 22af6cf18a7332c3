"""Salesforce's files, read into one table per object (fields.py says which column is
which): CSV files, and reports saved as XLSX (through spreadsheet.py). Shapes: the weekly
Data Export's files and Data Loader's (API names, one file per object, named after it:
Account.csv), and report exports (labels; a Classic report's CSV ends with a blank line
and a footer of the report's name, a copyright and who generated it, which is not
read)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

from reviews.engine.ingest.columns import header_key
from reviews.engine.ingest.csv_rows import COMMA, csv_rows
from reviews.engine.ingest.encodings import AUTO, Undecodable, csv_codec
from reviews.engine.ingest.errors import ErrorList, Limits
from reviews.engine.ingest.salesforce.fields import (
    SfObject,
    map_headers,
    object_by_headers,
    object_of,
    record_keys,
)
from reviews.engine.ingest.salesforce.ids import to18
from reviews.engine.ingest.spreadsheet import sheet_rows, spreadsheet_kind
from reviews.engine.ingest.values import describe

_HEAD_BYTES = 64 * 1024  # enough for any header row Salesforce writes
CRM = "Salesforce"
_HUBSPOT_ID = header_key("Record ID")  # a HubSpot export's id column: never Salesforce's
# A report saved as XLSX: its amounts and dates taken as the cells' types (as HubSpot's).
_TYPED = frozenset({"amount", "closeDate", "updatedAt"})


@dataclass(slots=True)
class SfTable:
    name: str  # the file name
    sf_object: SfObject
    report: bool  # a report export: labels, and values as people write them
    # (row number, 18-character id, {key: cell}, {header: cell} of the columns that fill no
    # record field): non-empty cells only
    rows: list[tuple[int, str, dict[str, str], dict[str, str]]] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)  # header -> the field it fills
    keys: frozenset[str] = frozenset()  # every key the file has a column for
    ignored: list[str] = field(default_factory=list)  # headers of columns nothing reads


def header_row(
    name: str, data: bytes, encoding: str = AUTO, limits: Limits | None = None
) -> list[str] | None:
    """A file's first row (a workbook's: its export sheet's), or None if it has none."""
    if spreadsheet_kind(name, data):
        sheet = sheet_rows(name, data, ErrorList(1), limits or Limits(), _columns(name), CRM)
        return sheet[0] if sheet else None
    try:
        codec = csv_codec(data[:_HEAD_BYTES], encoding)
    except Undecodable:
        return None
    text = data[:_HEAD_BYTES].decode(codec, errors="ignore")
    try:
        return next(csv.reader(io.StringIO(text, newline="")), None)
    except csv.Error:
        return None


def _columns(name: str):
    """spreadsheet.Columns for Salesforce: a sheet is an export of an object when its
    headers (or the file's name) say so; its amounts and dates are taken as typed."""

    def columns(headers: list[str]) -> dict[int, str] | None:
        sf_object, report = object_of(name, headers)
        if sf_object is None:
            return None
        mapped = map_headers(sf_object, headers, report)
        return {p: k for p, k in mapped.items() if k in _TYPED}

    return columns


def is_salesforce_file(name: str, data: bytes, limits: Limits | None = None) -> bool:
    """A file Salesforce wrote (CSV, or a report saved as XLSX): named for one of its
    objects and with its id column (a HubSpot export saved as Contact.csv has none), or
    headed by its object's names (then refused if it lacks its id column)."""
    headers = header_row(name, data, limits=limits)
    if not headers:
        return False
    sf_object, report = object_of(name, headers)
    if sf_object is None:
        return False
    if "id" in map_headers(sf_object, headers, report).values() or not sf_object.needs_id:
        return True
    keys = {header_key(h) for h in headers}
    return _HUBSPOT_ID not in keys and object_by_headers(keys, report) is not None


def read_table(
    name: str, data: bytes, errors: ErrorList, encoding: str = AUTO, limits: Limits | None = None
) -> SfTable | None:
    """The file's rows, or None (with an error) when it is not an export Salesforce wrote;
    a file of another object of a Data Export (Task.csv) is None without an error."""
    if spreadsheet_kind(name, data):
        sheet = sheet_rows(name, data, errors, limits or Limits(), _columns(name), CRM)
        if sheet is None:
            return None
        return _table(name, *sheet, errors, read_error=())
    opened = csv_rows(name, data, errors, encoding, delimiters=COMMA)
    return _table(name, *opened, errors, read_error=csv.Error) if opened else None


def _table(
    name: str, headers: list[str] | None, rows, errors: ErrorList, read_error
) -> SfTable | None:
    if not headers or not any(h.strip() for h in headers):
        errors.add(f"{name}: empty file, no header row")
        return None
    sf_object, report = object_of(name, headers)
    if sf_object is None:
        return None
    mapped = map_headers(sf_object, headers, report)
    if "id" not in mapped.values() and sf_object.needs_id:
        wanted = sf_object.fields["id"][1 if report else 0]
        errors.add(f"{name}: no {wanted} column: every record needs its Salesforce id")
        return None
    fills = record_keys(sf_object)
    table = SfTable(
        name=name,
        sf_object=sf_object,
        report=report,
        headers={headers[p].strip(): k for p, k in mapped.items() if k in fills and k != "id"},
        keys=frozenset(mapped.values()),
        ignored=sorted(
            {
                h.strip()
                for p, h in enumerate(headers)
                if h.strip() and (p not in mapped or mapped[p] in sf_object.unread)
            }
        ),
    )
    _read(table, headers, mapped, fills, rows, errors, read_error)
    return table


def _read(
    table: SfTable,
    headers: list[str],
    mapped: dict[int, str],
    fills: frozenset[str],
    rows,
    errors: ErrorList,
    read_error: type[Exception] | tuple[type[Exception], ...],
) -> None:
    kept = [
        (p, h.strip()) for p, h in enumerate(headers) if mapped.get(p) not in fills and h.strip()
    ]
    id_at = next((p for p, k in mapped.items() if k == "id"), None)
    id_header = headers[id_at].strip() if id_at is not None else ""
    first_row: dict[str, int] = {}
    row_number = 1
    try:
        for row_number, row in enumerate(rows, start=2):
            if not any(_filled(cell.strip() if cell.__class__ is str else cell) for cell in row):
                if table.report:
                    break  # a report's footer follows its first blank line
                continue
            values = {key: row[p] for p, key in mapped.items() if p < len(row) and _filled(row[p])}
            given = values.pop("id", "").strip()
            if id_at is None:  # rows without ids (a contact roles report): by position
                extra = {h: row[p] for p, h in kept if p < len(row) and row[p]}
                table.rows.append((row_number, "", values, extra))
                continue
            if not given:
                errors.add(f"{table.name} row {row_number} ({id_header}): missing")
                continue
            rid = to18(given)
            if rid is None:
                errors.add(
                    f"{table.name} row {row_number} ({id_header}): not a Salesforce id "
                    f"(15 or 18 letters and digits): {describe(given)}"
                )
                continue
            first = first_row.setdefault(rid, row_number)
            if first != row_number:
                errors.add(
                    f"{table.name} row {row_number} ({id_header}): "
                    f"duplicate of row {first} ({describe(rid)})"
                )
                continue
            extra = {h: row[p] for p, h in kept if p < len(row) and row[p]}
            table.rows.append((row_number, rid, values, extra))
    except read_error as error:
        errors.add(f"{table.name} row {row_number + 1}: unreadable: {error}")


def _filled(cell: object) -> bool:
    """Whether a cell holds a value: text that is not empty, or a typed spreadsheet cell
    (an amount of 0 is one)."""
    return cell != "" if cell.__class__ is str else cell is not None
