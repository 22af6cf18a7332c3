"""HubSpot's own CSV exports (docs/input.md): one file each for companies, contacts, deals.

Each file is recognised by its headers, not its name. Its columns are mapped to fields
through the one table in columns.py; hubspot_records turns the rows into records with
the same record builder and ValueProblems as a JSON record."""

from __future__ import annotations

import csv
from datetime import datetime

from reviews.engine.batch import Batch
from reviews.engine.ingest.columns import COLUMNS, LANGUAGES, kind_of, map_headers
from reviews.engine.ingest.csv_rows import csv_rows
from reviews.engine.ingest.errors import ErrorList, Limits
from reviews.engine.ingest.hubspot_records import Table, assemble
from reviews.engine.ingest.spreadsheet import sheet_rows, spreadsheet_kind
from reviews.engine.ingest.values import describe


def parse_csv_batch(
    files: list[tuple[str, bytes]],
    *,
    as_of: datetime | None,
    received_at: datetime,
    max_errors: int,
    date_order: str = "MDY",
    limits: Limits | None = None,
) -> Batch:
    """A Batch from one to three HubSpot CSV exports. A kind without a file is empty
    and named in `partial`. The as-of time is `as_of` if given, else the newest Last
    Modified Date in the files, else `received_at`. `date_order` (MDY or DMY) reads
    dates like 07/08/2026 in a file whose values do not settle it."""
    errors = ErrorList(max_errors)
    limits = limits or Limits(max_errors=max_errors, date_order=date_order)
    tables: dict[str, Table] = {}
    for name, data in files:
        if spreadsheet_kind(name, data):
            sheet = sheet_rows(name, data, errors, limits)
            table = table_from_rows(name, *sheet, errors) if sheet else None
        else:
            opened = csv_rows(name, data, errors, limits.encoding)
            table = table_from_rows(name, *opened, errors, read_error=csv.Error) if opened else None
        if table is None:
            continue
        if table.kind in tables:
            other = tables[table.kind].name
            errors.add(f"{name}: a second {table.kind} export (the first is {other})")
            continue
        tables[table.kind] = table
    errors.raise_if_any()
    return assemble(
        tables, as_of=as_of, received_at=received_at, date_order=date_order, source="hubspot-csv"
    )


def table_from_rows(
    name: str,
    headers: list[str] | None,
    rows,
    errors: ErrorList,
    *,
    read_error: type[Exception] | tuple[type[Exception], ...] = (),
) -> Table | None:
    """One export from its header row and an iterator over its other rows (lists of
    cells): shared by CSV files and spreadsheets (spreadsheet.py)."""
    if not headers or not any(h.strip() for h in headers):
        errors.add(f"{name}: empty file, no header row")
        return None
    kind = kind_of(headers)
    if kind is None:
        shown = ", ".join(h.strip() for h in headers[:12] if h.strip())
        errors.add(
            f"{name}: not a HubSpot companies, contacts or deals export: none of its "
            f"headers names a deal, an email or a company ({shown}). revreview reads "
            f"headers in {LANGUAGES} and HubSpot's internal names: export again with "
            "your HubSpot language set to English, or with internal property names"
        )
        return None
    mapped, ignored = map_headers(kind, headers)
    if not any(key == "id" for _, key in mapped):
        errors.add(f"{name}: no {COLUMNS[kind.name]['id'][0]} column")
        return None
    table = Table(
        name=name,
        kind=kind.name,
        rows=[],
        ignored=ignored,
        columns=frozenset(key for _, key in mapped),  # its header: blank columns count
        headers={headers[position].strip(): key for position, key in mapped},
    )
    _read(table, headers, mapped, rows, errors, read_error)
    return table


def _read(
    table: Table,
    headers: list[str],
    mapped: list[tuple[int, str]],
    rows,
    errors: ErrorList,
    read_error: type[Exception] | tuple[type[Exception], ...],
) -> None:
    name = table.name
    taken = {position for position, _ in mapped}
    unmapped = [(p, h) for p, h in enumerate(headers) if p not in taken and h.strip()]
    first_row: dict[str, int] = {}
    row_number = 1  # the header; spreadsheet rows count from 1
    try:
        for row_number, row in enumerate(rows, start=2):
            fields = {key: row[p] for p, key in mapped if p < len(row) and row[p]}
            if not fields and not any(row):
                continue  # blank line, as Excel leaves at the end
            rid = fields.pop("id", "").strip()
            if not rid:
                errors.add(f"{name} row {row_number} (Record ID): missing")
                continue
            first = first_row.setdefault(rid, row_number)
            if first != row_number:
                errors.add(
                    f"{name} row {row_number} (Record ID): "
                    f"duplicate of row {first} ({describe(rid)})"
                )
                continue
            extra = {h: row[p] for p, h in unmapped if p < len(row) and row[p]}
            table.rows.append((rid, fields, extra))
    except read_error as error:
        errors.add(f"{name} row {row_number + 1}: unreadable: {error}")
