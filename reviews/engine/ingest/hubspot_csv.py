"""HubSpot's own CSV exports (docs/input.md): one file each for companies, contacts, deals.

Each file is recognised by its headers, not its name. Its columns are mapped to the
JSON field names through HUBSPOT_COLUMNS, so every row goes through the same record
builder, value parsers and ValueProblems as a JSON record."""

from __future__ import annotations

import csv
import io
from datetime import datetime

from reviews.engine.batch import Batch, ValueProblem
from reviews.engine.ingest.errors import ErrorList, not_utf8
from reviews.engine.ingest.records import COMPANIES, CONTACTS, DEALS, Kind, Record, build_record
from reviews.engine.ingest.values import describe

# HubSpot default export header -> our JSON field, per export. Headers match case- and
# space-insensitively. Extend it here; where two headers fill one field, the one listed
# first wins when a file has both. Every column not listed is kept in `extra`.
HUBSPOT_COLUMNS: dict[str, dict[str, str]] = {
    "companies": {
        "Record ID": "id",
        "Company name": "name",
        "Company Domain Name": "domain",
        "Enriched At": "enrichedAt",
        "Last Enrichment Date": "enrichedAt",
        "Last Modified Date": "updatedAt",
    },
    "contacts": {
        "Record ID": "id",
        "Email": "email",
        "First Name": "firstName",
        "Last Name": "lastName",
        "Associated Company IDs": "companyId",
        "Associated Company ID": "companyId",
        "Associated Company": "companyId",
    },
    "deals": {
        "Record ID": "id",
        "Deal Name": "name",
        "Amount": "amount",
        "Deal Stage": "stage",
        "Close Date": "closeDate",
        "Pipeline": "pipeline",
        "Associated Company IDs": "companyId",
        "Associated Company ID": "companyId",
        "Associated Contact IDs": "contactIds",
    },
}

# Which export a file is: the first kind with one of its marker headers. Contacts come
# before companies because a contacts export often carries a "Company Name" column.
KIND_MARKERS: tuple[tuple[Kind, tuple[str, ...]], ...] = (
    (DEALS, ("Deal Name", "Deal Stage")),
    (CONTACTS, ("Email",)),
    (COMPANIES, ("Company name", "Company Domain Name")),
)

ID_SEPARATOR = ";"  # HubSpot joins several associated ids in one cell with ";"
DELIMITERS = (",", ";", "\t")


def header_key(header: str) -> str:
    return "".join(header.split()).casefold()


_COLUMNS = {
    kind: [(header_key(header), key) for header, key in columns.items()]
    for kind, columns in HUBSPOT_COLUMNS.items()
}


def parse_csv_batch(
    files: list[tuple[str, bytes]],
    *,
    as_of: datetime | None,
    received_at: datetime,
    max_errors: int,
) -> Batch:
    """A Batch from one to three HubSpot CSV exports; a kind without a file is empty.
    CSV exports carry no as-of time: `as_of` if given, else `received_at`."""
    errors = ErrorList(max_errors)
    tables: dict[str, _Table] = {}
    for name, data in files:
        table = _open(name, data, errors)
        if table is None:
            continue
        if table.kind.name in tables:
            other = tables[table.kind.name].name
            errors.add(f"{name}: a second {table.kind.name} export (the first is {other})")
            continue
        tables[table.kind.name] = table
    problems: list[ValueProblem] = []
    records = {
        kind.name: _read(tables[kind.name], errors, problems) if kind.name in tables else []
        for kind in (COMPANIES, CONTACTS, DEALS)
    }
    errors.raise_if_any()
    return Batch(
        id=None,
        as_of=as_of or received_at,
        source="hubspot-csv",
        companies=records["companies"],
        contacts=records["contacts"],
        deals=records["deals"],
        pipelines={},
        value_problems=problems,
    )


class _Table:
    """One recognised export: its rows still unread, and where each column goes."""

    def __init__(self, name: str, kind: Kind, headers: list[str], rows) -> None:
        self.name = name
        self.kind = kind
        self.rows = rows
        positions = {}
        for position, header in enumerate(headers):
            positions.setdefault(header_key(header), position)
        self.mapped: list[tuple[int, str]] = []  # (column, JSON key)
        taken: set[int] = set()
        filled: set[str] = set()
        for key_of_header, key in _COLUMNS[kind.name]:
            position = positions.get(key_of_header)
            if position is not None and key not in filled:
                self.mapped.append((position, key))
                taken.add(position)
                filled.add(key)
        self.unmapped = [(p, h) for p, h in enumerate(headers) if p not in taken and h.strip()]


def _open(name: str, data: bytes, errors: ErrorList) -> _Table | None:
    try:
        # Decoded whole once to find a bad byte exactly, and the delimiter; the rows
        # are then read from a stream, so the file is never held as text (a StringIO
        # would cost four bytes a character).
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        errors.add(
            f"{name}: {not_utf8(data, error)}; "
            'export it again, or save it from Excel as "CSV UTF-8"'
        )
        return None
    end = text.find("\n")
    first_line = text if end < 0 else text[:end]
    del text
    # utf-8-sig drops Excel's BOM; newline="" lets the csv module handle CRLF and line
    # breaks inside quoted cells.
    stream = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline="")
    rows = csv.reader(stream, delimiter=_delimiter(first_line))
    try:
        headers = next(rows, None)
    except csv.Error as error:
        errors.add(f"{name} row 1: unreadable CSV: {error}")
        return None
    if not headers or not any(h.strip() for h in headers):
        errors.add(f"{name}: empty file, no header row")
        return None
    kind = _kind_of(headers)
    if kind is None:
        shown = ", ".join(h.strip() for h in headers[:8] if h.strip())
        errors.add(
            f"{name}: not a HubSpot companies, contacts or deals export "
            f"(no Deal Name, Email or Company name column; headers: {shown})"
        )
        return None
    table = _Table(name, kind, headers, rows)
    if not any(key == "id" for _, key in table.mapped):
        errors.add(f"{name}: no Record ID column")
        return None
    return table


def _delimiter(header_line: str) -> str:
    """The most frequent of , ; and tab on the header line (csv.Sniffer guesses badly
    on short or quoted samples). A tie goes to the comma."""
    return max(DELIMITERS, key=header_line.count)


def _kind_of(headers: list[str]) -> Kind | None:
    present = {header_key(h) for h in headers}
    for kind, markers in KIND_MARKERS:
        if any(header_key(marker) in present for marker in markers):
            return kind
    return None


def _read(table: _Table, errors: ErrorList, problems: list[ValueProblem]) -> list[Record]:
    kind, name = table.kind, table.name
    first_row: dict[str, int] = {}
    records: list[Record] = []
    row_number = 1  # the header; spreadsheet rows count from 1
    try:
        for row_number, row in enumerate(table.rows, start=2):
            fields = {key: row[p] for p, key in table.mapped if p < len(row) and row[p]}
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
            _split_ids(fields)
            extra = {h: row[p] for p, h in table.unmapped if p < len(row) and row[p]}
            records.append(build_record(kind, rid, len(records), fields, extra, problems))
    except csv.Error as error:
        errors.add(f"{name} row {row_number + 1}: unreadable CSV: {error}")
    return records


def _split_ids(fields: dict) -> None:
    """HubSpot lists several associated records in one cell: "101;102". A contact or
    deal has one company, so it takes the first."""
    company = fields.get("companyId")
    if company is not None:
        ids = _ids(company) if ID_SEPARATOR in company else [company.strip()]
        fields["companyId"] = ids[0] if ids else None
    contacts = fields.get("contactIds")
    if contacts is not None:
        fields["contactIds"] = _ids(contacts)


def _ids(cell: str) -> list[str]:
    return [part.strip() for part in cell.split(ID_SEPARATOR) if part.strip()]
