"""Salesforce's shapes one at a time, as a QA pass found them misread: report labels of a
multi-currency org, reports saved as XLSX, files without their id column, Data Loader
files under other names, and where an invalid value sits in the file."""

from __future__ import annotations

import csv
import io
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest

from reviews.engine.ingest import IngestError, UploadedFile, parse_upload
from reviews.samplegen import salesforce_org as org
from tests.engine.ingest.test_salesforce import facts, review

OPP_ID = "0065g00000AbCdE"


def parse(*files: tuple[str, str | bytes]):
    uploads = [UploadedFile(n, d.encode() if isinstance(d, str) else d) for n, d in files]
    return parse_upload(uploads, as_of=org.AS_OF, received_at=org.AS_OF)


def errors(*files: tuple[str, str | bytes]) -> list[str]:
    with pytest.raises(IngestError) as caught:
        parse(*files)
    return caught.value.errors


# --- currencies ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "label", ["Amount Currency", "Opportunity Currency", "AMOUNT CURRENCY", "Currency"]
)
def test_a_multi_currency_reports_currency_column_is_the_opportunitys_currency(label):
    # A multi-currency org's report export writes each currency field's code in a column
    # of its own before it ("Amount Currency"), the converted amount's too.
    report = (
        f"Opportunity ID,Opportunity Name,{label},Amount,"
        "Amount (Converted) Currency,Amount (Converted)\n"
        f'{OPP_ID},Fleet,EUR,"120,000.00",USD,"130,800.00"\n'
    )
    batch = parse(("report1.csv", report))
    (deal,) = batch.deals
    assert (deal.currency, deal.amount) == ("EUR", Decimal("120000.00"))
    assert batch.ignored_columns["report1.csv"] == [
        "Amount (Converted)",
        "Amount (Converted) Currency",
    ]


# --- reports saved as XLSX ----------------------------------------------------------------


def workbook(rows: list[list]) -> bytes:
    """One sheet, as a report's Export (Details Only, Excel Format .xlsx) saves it."""
    from openpyxl import Workbook

    book = Workbook()
    for row in rows:
        book.active.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def as_xlsx(name: str, data: bytes) -> tuple[str, bytes]:
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
    return name.rsplit(".", 1)[0] + ".xlsx", workbook(rows)


def test_reports_saved_as_xlsx_give_the_findings_of_the_same_reports_as_csv():
    reports = org.reports()
    as_csv = facts(review(parse(*reports.items())))
    assert facts(review(parse(*(as_xlsx(n, d) for n, d in reports.items())))) == as_csv
    # one of them as XLSX among the others' CSV files
    mixed = dict(reports)
    name = "report1722502800003.csv"
    mixed.update([as_xlsx(name, mixed.pop(name))])
    batch = parse(*mixed.items())
    assert len(batch.deals) == len(org.OPPORTUNITIES)
    assert "Fiscal Period" in batch.ignored_columns["report1722502800003.xlsx"]
    assert facts(review(batch)) == as_csv


def test_an_xlsx_report_alone_is_read_with_its_typed_cells():
    rows = [
        ["Opportunity Name", "Opportunity ID", "Stage", "Amount Currency", "Amount",
         "Close Date", "Last Modified Date"],
        ["Fleet", OPP_ID, "Closed Won", "EUR", 120000.5, datetime(2026, 7, 3),
         datetime(2026, 7, 30, 10, 11)],
        ["Zero", "0065g00000AbCdF", "Prospecting", "USD", 0, datetime(2026, 9, 1), None],
    ]  # fmt: skip
    batch = parse(("Opportunities report.xlsx", workbook(rows)))
    assert batch.crm == "salesforce" and batch.source == "salesforce-report"
    fleet, zero = batch.deals
    assert (fleet.amount, fleet.currency, fleet.close_date) == (
        Decimal("120000.5"),
        "EUR",
        date(2026, 7, 3),
    )
    assert zero.amount == Decimal(0)
    assert batch.value_problems == []


def test_an_api_named_xlsx_named_for_its_object_is_read():
    rows = [["Id", "Name", "Website"], ["0015g00000AbCdE", "Halvorsen Marine", "halvorsen.example"]]
    batch = parse(("Account.xlsx", workbook(rows)))
    assert [(c.id, c.name) for c in batch.companies] == [("0015g00000AbCdEAAV", "Halvorsen Marine")]


# --- a report without its id column ----------------------------------------------------


def without(data: bytes, column: str) -> bytes:
    rows = list(csv.reader(io.StringIO(data.decode())))
    at = rows[0].index(column)
    out = io.StringIO()
    csv.writer(out).writerows([r[:at] + r[at + 1 :] if len(r) > at else r for r in rows])
    return out.getvalue().encode()


@pytest.mark.parametrize(
    ("name", "column"),
    [
        ("report1722502800003.csv", "Opportunity ID"),
        ("report1722502800004.csv", "Lead ID"),
        ("report1722502800002.csv", "Contact ID"),
        ("report1722502800001.csv", "Account ID"),
    ],
)
def test_a_report_without_its_id_column_is_refused_naming_the_file_and_the_column(name, column):
    reports = org.reports()
    reports[name] = without(reports[name], column)
    expected = [f"{name}: no {column} column: every record needs its Salesforce id"]
    assert errors(*reports.items()) == expected
    assert errors((name, reports[name])) == expected  # alone too


# --- Data Loader files under other names ------------------------------------------------


def dropping(data: bytes, *columns: str) -> bytes:
    for column in columns:
        data = without(data, column)
    return data


def test_data_loader_files_under_other_names_are_told_by_their_fields():
    files = org.data_export(loader=True)
    renamed = {
        # Data Loader names every export extract.csv; a team renames them as it likes
        "extract.csv": dropping(files.pop("Account.csv"), "AccountSource"),
        "extract (1).csv": dropping(files.pop("Contact.csv"), "AccountId"),
        "extract (2).csv": dropping(files.pop("Lead.csv"), "IsConverted"),
        "extract (3).csv": dropping(files.pop("Opportunity.csv"), "StageName"),
        "users.csv": dropping(files.pop("User.csv"), "Username"),
    }
    batch = parse(*files.items(), *renamed.items())
    assert batch.counts == {"companies": 4, "contacts": 5, "deals": 5, "leads": 5}
    assert batch.warnings == []
    assert {lead.owner for lead in batch.leads} >= {"Priya Nair"}  # users.csv read


def test_a_file_nothing_recognises_is_named_in_a_warning_not_dropped_silently():
    files = org.data_export(loader=True)
    task = '"Id","Subject","ActivityDate","WhatId"\n"00T5g00000AbCdE","Call","2026-08-01",""\n'
    batch = parse(*files.items(), ("extract.csv", task), ("Task.csv", task))
    assert [w["message"] for w in batch.warnings] == [
        "extract.csv was not read: neither its name nor its columns say it holds Salesforce "
        "Accounts, Contacts, Opportunities, Leads, contact roles, Users or stages"
    ]
    assert batch.warnings[0]["code"] == "unread_file"
    # a Data Export's file of another object is listed as not read, without a warning
    assert "Task.csv" in batch.ignored_columns and "extract.csv" in batch.ignored_columns


# --- the as-of time -----------------------------------------------------------------------


@pytest.mark.parametrize("column", ["LastModifiedDate", "SystemModstamp"])
@pytest.mark.parametrize("newest", ["Opportunity.csv", "Contact.csv"])
def test_the_as_of_time_is_the_newest_modification_of_any_object(newest, column):
    stamp = "2026-07-02T10:00:00.000+0000"
    files = {
        "Account.csv": f'"Id","Name","LastModifiedDate"\n"0015g00000AbCdE","A","{stamp}"\n',
        "Opportunity.csv": f'"Id","Name","{column}"\n"{OPP_ID}","D","{stamp}"\n',
        "Contact.csv": f'"Id","Email","{column}"\n"0035g00000AbCdE","a@b.example","{stamp}"\n',
    }
    files["Account.csv"] = files["Account.csv"].replace("07-02", "07-01")
    files[newest] = files[newest].replace("2026-07-02", "2026-07-20")
    uploads = [UploadedFile(n, d.encode()) for n, d in files.items()]
    batch = parse_upload(uploads, as_of=None, received_at=org.AS_OF)
    assert (batch.as_of, batch.as_of_source) == (
        datetime(2026, 7, 20, 10, tzinfo=UTC),
        "last_modified",
    )


# --- the columns not read -----------------------------------------------------------------


def test_ignored_columns_lists_only_the_columns_nothing_reads():
    batch = parse(*org.data_export(loader=True).items())
    assert batch.ignored_columns == {
        "Account.csv": ["BillingCity", "CreatedDate", "Industry", "Type"],
        "Contact.csv": ["Title"],
        "Opportunity.csv": ["ForecastCategory", "Type"],
        "Lead.csv": ["Status"],
        "OpportunityContactRole.csv": ["Role"],
        "OpportunityStage.csv": ["IsActive"],
        "User.csv": ["Email", "Username"],
    }
    reported = parse(*org.reports().items()).ignored_columns
    assert reported["report1722502800003.csv"] == ["Account Name", "Fiscal Period"]
    assert reported["report1722502800005.csv"] == ["Contact Role", "Opportunity Name"]


# --- where an invalid value sits ----------------------------------------------------------


def test_an_invalid_value_names_the_salesforce_file_row_and_column():
    deals = (
        '"Id","IsDeleted","Name","AccountId","CloseDate"\n'
        '"0065g00000AbCdA","true","Gone","0015g00000AbCdE","2026-07-01"\n'  # not read
        '"0065g00000AbCdB","false","Kept","0015g00000AbCdE","2026-07-01"\n'
        f'"{OPP_ID}","false","Fleet","n/a","soon"\n'
    )
    found = [f for f in review(parse(("Opportunity.csv", deals))) if f.kind == "invalid_value"]
    assert sorted((f.title, f.detail) for f in found) == [
        (
            'Invalid AccountId on opportunity "Fleet" (0065g00000AbCdEAAV): not a Salesforce '
            'id (15 or 18 letters and digits): "n/a"',
            "Opportunity.csv row 4 (AccountId): not a Salesforce id (15 or 18 letters and "
            'digits): "n/a"',
        ),
        (
            'Invalid CloseDate on opportunity "Fleet" (0065g00000AbCdEAAV): not a date: "soon"',
            'Opportunity.csv row 4 (CloseDate): not a date: "soon"',
        ),
    ]
    report = f"Opportunity ID,Opportunity Name,Close Date\n{OPP_ID},Fleet,someday\n"
    (finding,) = [f for f in review(parse(("r.csv", report))) if f.kind == "invalid_value"]
    assert finding.detail == 'r.csv row 2 (Close Date): not a date: "someday"'
    assert finding.title.startswith("Invalid Close Date on opportunity")


def test_an_invalid_values_task_names_the_salesforce_field():
    from tests.engine.fixplan_helpers import plan_of

    deals = f'"Id","Name","AccountId","CloseDate"\n"{OPP_ID}","Fleet","n/a","soon"\n'
    report = "Opportunity ID,Opportunity Name,Close Date\n0065g00000AbCdF,Pilot,someday\n"
    for files, expected in (
        ([("Opportunity.csv", deals)], {"AccountId", "CloseDate"}),
        ([("r.csv", report)], {"CloseDate"}),
    ):
        plan = plan_of(parse(*files))
        tasks = [t for t in plan.tasks if t.kind == "invalid_value"]
        assert {p for t in tasks for p in t.property.split(";")} == expected
        assert {t.object for t in tasks} == {"deals"}


# --- a currency code that is not one ------------------------------------------------------


def test_an_invalid_currency_code_is_an_invalid_value_and_its_amount_is_never_dollars():
    deals = (
        '"Id","Name","StageName","IsClosed","IsWon","CloseDate","Amount","CurrencyIsoCode"\n'
        f'"{OPP_ID}","Platform","Prospecting","false","false","2026-07-01","85000","EURO"\n'
    )
    batch = parse(("Opportunity.csv", deals))
    (deal,) = batch.deals
    assert deal.currency == "XXX"  # ISO 4217's "no currency": shown as ¤, added to nothing
    found = review(batch)
    (invalid,) = [f for f in found if f.kind == "invalid_value"]
    assert invalid.detail == 'Opportunity.csv row 2 (CurrencyIsoCode): not a currency code: "EURO"'
    (late,) = [f for f in found if f.kind == "open_past_close_date"]
    assert (late.amount_at_risk, late.currency) == (Decimal(85000), "XXX")
    assert not any("$" in f.title + f.detail for f in found)
