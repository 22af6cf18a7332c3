"""HubSpot CSV exports (docs/input.md): recognised by headers, mapped to the batch fields."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

from reviews.engine.batch import Company, Contact, Deal, ValueProblem
from reviews.engine.ingest.columns import COLUMNS
from tests.engine.ingest.helpers import errors_of, parse_files

COMPANIES_CSV = (
    "Record ID,Company name,Company Domain Name,Industry,Number of Employees,Last Modified Date\n"
    "101,Vertex Robotics,vertexrobotics.example,MACHINERY,240,2026-07-30 10:11\n"
    "102,Acme,acme.example,,,2026-07-01\n"
)
CONTACTS_CSV = (
    "Record ID,First Name,Last Name,Email,Associated Company IDs,Job Title\n"
    "201,Dana,Kim,dana@vertexrobotics.example,101,COO\n"
)
DEALS_CSV = (
    "Record ID,Deal Name,Deal Stage,Amount,Close Date,Pipeline,"
    "Associated Company IDs,Associated Contact IDs\n"
    "301,Vertex — cell automation,Closed Won,410000.50,2026-07-31,Sales Pipeline,101,201;202\n"
)


def test_csv_three_exports_make_one_batch():
    batch = parse_files(
        ("deals.csv", DEALS_CSV), ("contacts.csv", CONTACTS_CSV), ("companies.csv", COMPANIES_CSV)
    )

    # No as-of given: the newest Last Modified Date in the files.
    assert (batch.id, batch.source, batch.as_of, batch.as_of_source, batch.pipelines) == (
        None,
        "hubspot-csv",
        datetime(2026, 7, 30, 10, 11, tzinfo=UTC),
        "last_modified",
        {},
    )
    assert batch.companies == [
        Company(
            id="101",
            index=0,
            name="Vertex Robotics",
            domain="vertexrobotics.example",
            updated_at=datetime(2026, 7, 30, 10, 11, tzinfo=UTC),
            extra={"Industry": "MACHINERY", "Number of Employees": "240"},
        ),
        Company(
            id="102",
            index=1,
            name="Acme",
            domain="acme.example",
            updated_at=datetime(2026, 7, 1, tzinfo=UTC),
        ),
    ]
    assert batch.contacts == [
        Contact(
            id="201",
            index=0,
            email="dana@vertexrobotics.example",
            first_name="Dana",
            last_name="Kim",
            company_id="101",
            company_ids=["101"],
            extra={"Job Title": "COO"},
        )
    ]
    assert batch.deals == [
        Deal(
            id="301",
            index=0,
            name="Vertex — cell automation",
            amount=Decimal("410000.50"),
            stage="Closed Won",
            close_date=date(2026, 7, 31),
            company_id="101",
            contact_ids=["201", "202"],
            pipeline="Sales Pipeline",
            company_ids=["101"],
        )
    ]
    assert batch.value_problems == []


def test_csv_excel_bom_crlf_and_semicolons():
    text = (
        "Record ID;Deal Name;Amount;Close Date\r\n"
        '301;"Vertex; phase 2";410000;2026-07-31 10:11\r\n'
        '302;"Multi\r\nline";12;\r\n'
        ";;;\r\n"
    )

    batch = parse_files(("Deals Export.csv", b"\xef\xbb\xbf" + text.encode()))

    assert batch.deals == [
        Deal(
            id="301",
            index=0,
            name="Vertex; phase 2",
            amount=Decimal(410000),
            close_date=date(2026, 7, 31),
        ),
        Deal(id="302", index=1, name="Multi\r\nline", amount=Decimal(12)),
    ]


def test_csv_tab_delimited():
    batch = parse_files(("contacts.tsv", "Record ID\tEmail\n201\tdana@vertex.example\n"))

    assert batch.contacts == [Contact(id="201", index=0, email="dana@vertex.example")]


def test_csv_headers_match_ignoring_case_and_spaces():
    batch = parse_files(("x.csv", "record id , COMPANY  NAME,companydomainname\n7,Acme,acme.io\n"))

    assert batch.companies == [Company(id="7", index=0, name="Acme", domain="acme.io")]


def test_csv_kind_decided_by_headers_not_file_name():
    batch = parse_files(
        ("companies.csv", "Record ID,Deal Name\n1,Big deal\n"),
        ("deals.csv", "Record ID,Email,Company Name\n2,a@b.example,Acme\n"),
    )

    assert [d.id for d in batch.deals] == ["1"]
    # A contacts export with a Company Name column is still contacts.
    assert batch.contacts == [
        Contact(id="2", index=0, email="a@b.example", extra={"Company Name": "Acme"})
    ]
    assert batch.companies == []


def test_csv_unrecognised_file_named():
    errors = errors_of(parse_files, ("tickets.csv", "Ticket ID,Subject\n1,Help\n"))

    assert errors == [
        "tickets.csv: not a HubSpot companies, contacts or deals export: none of its "
        "headers names a deal, an email or a company (Ticket ID, Subject). revreview reads "
        "headers in English, German, French, Spanish, Portuguese and HubSpot's internal "
        "names: export again with your HubSpot language set to English, or with internal "
        "property names"
    ]


def test_csv_empty_file_and_missing_record_id_column():
    errors = errors_of(parse_files, ("a.csv", ""), ("b.csv", "Deal Name,Amount\nBig,1\n"))
    assert errors == ["a.csv: the file is empty (0 bytes)"]  # refused before any is read

    errors = errors_of(parse_files, ("a.csv", "\n"), ("b.csv", "Deal Name,Amount\nBig,1\n"))
    assert errors == ["a.csv: the file is empty (only blank lines or spaces)"]

    errors = errors_of(parse_files, ("b.csv", "Deal Name,Amount\nBig,1\n"))
    assert errors == ["b.csv: no Record ID column"]


def test_csv_two_exports_of_one_kind_rejected():
    errors = errors_of(
        parse_files, ("deals-1.csv", "Record ID,Deal Name\n1,a\n"), ("deals-2.csv", DEALS_CSV)
    )

    assert errors == ["deals-2.csv: a second deals export (the first is deals-1.csv)"]


def test_csv_record_errors_name_file_and_row():
    text = "Record ID,Deal Name\n1,a\n,b\n1,c\n   ,d\n2,e\n"

    assert errors_of(parse_files, ("deals.csv", text)) == [
        "deals.csv row 3 (Record ID): missing",
        'deals.csv row 4 (Record ID): duplicate of row 2 ("1")',
        "deals.csv row 5 (Record ID): missing",
    ]


def test_csv_not_utf8_is_read_as_cp1252():  # more encodings: test_csv_encodings.py
    data = "Record ID,Company name\n1,Café\n".encode("cp1252")

    assert [c.name for c in parse_files(("companies.csv", data)).companies] == ["Café"]


def test_csv_only_a_deals_export_is_a_batch():
    batch = parse_files(("deals.csv", DEALS_CSV))

    assert (len(batch.companies), len(batch.contacts), len(batch.deals)) == (0, 0, 1)


def test_csv_multiple_associated_ids():
    contacts = (
        "Record ID,Email,Associated Company IDs\n"
        "1,a@x.example,101;102\n"
        "2,b@x.example, 103 \n"
        "3,c@x.example,;104\n"
    )
    deals = (
        "Record ID,Deal Name,Associated Company IDs,Associated Contact IDs\n9,d,105;106, 1 ; 2;;3\n"
    )

    batch = parse_files(("contacts.csv", contacts), ("deals.csv", deals))

    assert [c.company_id for c in batch.contacts] == ["101", "103", "104"]
    assert (batch.deals[0].company_id, batch.deals[0].contact_ids) == ("105", ["1", "2", "3"])


def test_csv_associated_company_ids_preferred_over_associated_company():
    text = "Record ID,Email,Associated Company,Associated Company IDs\n1,a@x.example,Acme,101\n"

    batch = parse_files(("contacts.csv", text))

    assert batch.contacts[0].company_id == "101"
    assert batch.contacts[0].extra == {"companyName": "Acme"}


def test_csv_malformed_values_are_problems_with_json_paths():
    text = "Record ID,Deal Name,Amount,Close Date\n1,a,410000,2026-07-31\n2,b,41O000,31/31/2026\n"

    batch = parse_files(("deals.csv", text), as_of=datetime(2026, 9, 1, tzinfo=UTC))

    assert batch.as_of == datetime(2026, 9, 1, tzinfo=UTC)
    assert (batch.deals[1].amount, batch.deals[1].close_date) == (None, None)
    assert batch.value_problems == [
        ValueProblem("pipeline", "2", "deals[1].amount", 'not a number: "41O000"'),
        ValueProblem("pipeline", "2", "deals[1].closeDate", 'not a date: "31/31/2026"'),
    ]


def test_csv_epoch_millisecond_cells():
    batch = parse_files(("companies.csv", "Record ID,Company name,Last Modified Date\n1,A,0\n"))

    assert batch.companies[0].updated_at == datetime(1970, 1, 1, tzinfo=UTC)


def test_csv_mapping_table_covers_spec_headers():
    mapped = {
        kind: {label for labels in fields.values() for label in labels}
        for kind, fields in COLUMNS.items()
    }

    assert {"Record ID", "Company name", "Company Domain Name", "Last Modified Date"} <= mapped[
        "companies"
    ]
    assert {"Email", "First Name", "Last Name", "Associated Company IDs"} <= mapped["contacts"]
    assert {"Deal Name", "Amount", "Deal Stage", "Close Date", "Pipeline"} <= mapped["deals"]
