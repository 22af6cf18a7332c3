"""HubSpot CSV exports with a column left out, for the partial-export tests (issue 37).

`export()` writes companies.csv, contacts.csv and deals.csv with the headers HubSpot's
own export gives them ("Record ID", "Deal Name", "Deal Stage", "Amount", "Close Date",
"Pipeline", "Associated Company IDs", ...); `drop` leaves out whole columns, by file and
header, as an export made from a view without them does. The records are a clean
portal (approved when exported whole), to which `won` adds a won deal without an amount
(critical) and `late` an open deal past its close date (a warning)."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

AS_OF = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)

COMPANIES = [
    ["Record ID", "Company name", "Company Domain Name", "Last Modified Date"],
    ["9001", "Harbor Analytics", "harbor.example", "2026-07-20 10:00"],
    ["9002", "Granite Packaging", "granitepackaging.example", "2026-07-25 16:30"],
]
CONTACTS = [
    ["Record ID", "First Name", "Last Name", "Email", "Associated Company IDs"],
    ["7001", "Maya", "Singh", "maya@harbor.example", "9001"],
    ["7002", "Owen", "Price", "owen@granitepackaging.example", "9002"],
]
DEAL_HEADERS = [
    "Record ID", "Deal Name", "Deal Stage", "Amount", "Close Date", "Pipeline",
    "Associated Company IDs", "Associated Contact IDs",
]  # fmt: skip
DEALS = [
    ["5002", "Harbor — analytics", "Appointment Scheduled", "20000", "2026-09-30",
     "Sales Pipeline", "9001", "7001"],
    ["5004", "Granite — packaging line", "Contract Sent", "50000", "2026-10-15",
     "Sales Pipeline", "9002", "7002"],
]  # fmt: skip
WON_WITHOUT_AMOUNT = [
    "5001", "Harbor — renewal", "Closed Won", "", "2026-07-15", "Sales Pipeline", "9001", "7001",
]  # fmt: skip
PAST_CLOSE_DATE = [
    "5003", "Granite — pilot", "Presentation Scheduled", "8000", "2026-07-01", "Sales Pipeline",
    "9002", "7002",
]  # fmt: skip

# Every column of the export, by file: what a test may leave out. Not Record ID, nor
# Email: without them a file is no export (no id; no email, no contacts export).
COLUMNS = [
    *(("companies.csv", h) for h in COMPANIES[0][1:]),
    *(("contacts.csv", h) for h in CONTACTS[0][1:] if h != "Email"),
    *(("deals.csv", h) for h in DEAL_HEADERS[1:]),
]


def export(
    *, won: bool = False, late: bool = False, drop: tuple[tuple[str, str], ...] = ()
) -> list[tuple[str, bytes]]:
    """The three files; `drop`: (file, header) columns left out of the header and rows."""
    deals = [DEAL_HEADERS, *DEALS]
    if won:
        deals.append(WON_WITHOUT_AMOUNT)
    if late:
        deals.append(PAST_CLOSE_DATE)
    files = {"companies.csv": COMPANIES, "contacts.csv": CONTACTS, "deals.csv": deals}
    return [(name, _write(rows, [h for f, h in drop if f == name])) for name, rows in files.items()]


def blank(files: list[tuple[str, bytes]], name: str, header: str) -> list[tuple[str, bytes]]:
    """The export with one column kept in the header but empty in every row."""
    out = []
    for file, data in files:
        rows = list(csv.reader(io.StringIO(data.decode())))
        if file == name:
            at = rows[0].index(header)
            rows = [rows[0], *([*row[:at], "", *row[at + 1 :]] for row in rows[1:])]
        out.append((file, _write(rows, [])))
    return out


def _write(rows: list[list[str]], dropped: list[str]) -> bytes:
    keep = [i for i, header in enumerate(rows[0]) if header not in dropped]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")  # as HubSpot writes them
    for row in rows:
        writer.writerow([row[i] for i in keep])
    return out.getvalue().encode()
