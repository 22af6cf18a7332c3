"""A HubSpot CSV export with a team's custom columns, for the team rules' tests: the
column headers are the property labels HubSpot writes ("Record ID", "Deal Stage",
"Phone Number", "Lifecycle Stage"), the team's own properties beside them ("Next Step",
"VAT Number", "Deal Type"), several ids joined by ";"."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

from reviews.engine.batch import Batch
from reviews.engine.ingest import UploadedFile, parse_upload
from reviews.engine.tables.build import Tables, build_tables

AS_OF = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)

COMPANIES = [
    ["Record ID", "Company name", "Company Domain Name", "Country/Region", "VAT Number",
     "Lifecycle Stage", "Company owner", "Phone Number", "Website URL", "Last Modified Date"],
    ["9001", "Vertex Robotics", "vertexrobotics.example", "Germany", "DE123456789",
     "Customer", "Ana Ortiz", "+4930123456", "https://vertexrobotics.example",
     "2026-07-30 10:11"],
    ["9002", "Granite Packaging", "granitepackaging.example", "France", "",
     "Customer", "Ben Li", "030 1234 567", "granitepackaging.example", "2026-07-12 08:00"],
    ["9003", "Harbor Analytics", "", "United States", "",
     "Opportunity", "", "+1 415 555 0100", "", "2026-07-20 16:45"],
    ["9004", "Nordlicht AG", "nordlicht.example", "DE", "",
     "Lead", "Ana Ortiz", "", "nordlicht", "2026-06-02 11:30"],
]  # fmt: skip

CONTACTS = [
    ["Record ID", "First Name", "Last Name", "Email", "Phone Number", "Lifecycle Stage",
     "Contact owner", "Associated Company IDs"],
    ["7001", "Dana", "Kim", "dana.kim@vertexrobotics.example", "+4930111222", "Customer",
     "Ana Ortiz", "9001"],
    ["7002", "Owen", "Price", "owen(at)granite", "0151 2345678", "Lead", "", "9002"],
    ["7003", "Maya", "Singh", "maya@harbor.example", "", "Customer", "Ben Li", "9003"],
]  # fmt: skip

DEALS = [
    ["Record ID", "Deal Name", "Amount", "Currency", "Deal Stage", "Close Date", "Pipeline",
     "Deal owner", "Next Step", "Deal Type", "Associated Company IDs",
     "Associated Contact IDs"],
    ["5001", "Vertex — cell automation", "410000", "EUR", "Contract Sent", "2026-09-30",
     "Sales Pipeline", "Ana Ortiz", "", "newbusiness", "9001", "7001"],
    ["5002", "Granite — renewal", "52000", "EUR", "Contract Sent", "2026-08-20",
     "Sales Pipeline", "", "Send countersigned copy", "existingbusiness", "9002", ""],
    ["5003", "Harbor — pilot", "120000", "", "Qualified To Buy", "2026-08-15",
     "Sales Pipeline", "", "  ", "existingbusiness", "9003", "7003"],
    ["5004", "Vertex — spare parts", "8000", "EUR", "Closed Won", "2026-06-30",
     "Sales Pipeline", "Ana Ortiz", "", "newbusiness", "9001", "7001"],
    ["5005", "Granite — line 2", "", "", "Appointment Scheduled", "2026-12-01",
     "Sales Pipeline", "Ben Li", "Demo", "", "9002", ""],
]  # fmt: skip


def csv_bytes(rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(rows)
    return out.getvalue().encode("utf-8")


def export_files(
    companies: list[list[str]] = COMPANIES,
    contacts: list[list[str]] = CONTACTS,
    deals: list[list[str]] = DEALS,
) -> list[UploadedFile]:
    return [
        UploadedFile("hubspot-crm-exports-all-companies-2026-08-01.csv", csv_bytes(companies)),
        UploadedFile("hubspot-crm-exports-all-contacts-2026-08-01.csv", csv_bytes(contacts)),
        UploadedFile("hubspot-crm-exports-all-deals-2026-08-01.csv", csv_bytes(deals)),
    ]


def export_batch(**files: list[list[str]]) -> Batch:
    return parse_upload(export_files(**files), as_of=AS_OF, received_at=AS_OF)


def export_tables(**files: list[list[str]]) -> Tables:
    return build_tables(export_batch(**files))
