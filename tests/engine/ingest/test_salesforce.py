"""Salesforce's exports (docs/input.md#salesforce-exports): the weekly Data Export's ZIP,
Data Loader's CSV files and report exports of one org (reviews.samplegen.salesforce_org)
give the same findings as the same data sent as HubSpot-shaped native JSON, in the org's
currencies; and each of Salesforce's shapes is read faithfully."""

from __future__ import annotations

import io
import json
import zipfile
from decimal import Decimal

import pytest

from reviews.engine.coverage import lists_not_run, missing_columns
from reviews.engine.ingest import IngestError, UploadedFile, parse_upload
from reviews.engine.ingest.salesforce.ids import to18
from reviews.engine.rules import Rules
from reviews.engine.specialists import NAMES, detector
from reviews.engine.tables.build import build_tables
from reviews.engine.team_rules.run import absent_lists
from reviews.samplegen import salesforce_org as org

ACC, CON, OPP, LEA = org.ACC, org.CON, org.OPP, org.LEA
LEAD_KINDS = ["lead_already_contact", "lead_inactive_owner", "lead_no_owner", "lead_same_email"]


def zipped(files: dict[str, bytes]) -> list[UploadedFile]:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return [UploadedFile("WE_00D5g000004abcdEAA_1.ZIP", buffer.getvalue())]


def loose(files: dict[str, bytes]) -> list[UploadedFile]:
    return [UploadedFile(name, data) for name, data in files.items()]


SHAPES = {
    "data-export-zip": lambda: zipped(org.data_export()),
    "data-loader-csv": lambda: loose(org.data_export(loader=True)),
    "reports": lambda: loose(org.reports()),
}


def parse(files: list[UploadedFile]):
    return parse_upload(files, as_of=org.AS_OF, received_at=org.AS_OF)


def review(batch) -> list:
    return [f for name in NAMES for f in detector(name)(batch, Rules())]


def facts(findings: list) -> list[tuple]:
    """What must agree across shapes: kind, records, severity, money and its currency."""
    return sorted(
        (f.kind, tuple(f.record_ids), str(f.severity), f.amount_at_risk, f.currency)
        for f in findings
    )


@pytest.fixture(scope="module")
def native():
    data = json.dumps(org.native_json()).encode()
    return review(parse([UploadedFile("batch.json", data)]))


@pytest.mark.parametrize("shape", SHAPES)
def test_every_shape_of_the_org_gives_the_findings_of_the_same_data_as_native_json(shape, native):
    batch = parse(SHAPES[shape]())
    assert batch.crm == "salesforce"
    assert facts(review(batch)) == facts(native)


def test_the_planted_problems_are_found_with_the_money_in_the_orgs_currencies(native):
    found = {
        (kind, ids): (severity, money, currency)
        for kind, ids, severity, money, currency in facts(native)
    }
    ids = lambda *keys: tuple(sorted(to18(k) for k in keys))  # noqa: E731
    assert found == {
        # the duplicate account: both Vertex Robotics, their open opportunities at stake
        ("company_same_domain", ids(ACC["vertex"], ACC["vertex2"])): (
            "warning", Decimal("440000.00"), "USD"),
        ("contact_wrong_company", ids(ACC["halvorsen"], ACC["bright"], CON["jonas"])): (
            "warning", Decimal(0), ""),
        # the pilot (on the second Vertex account) lists Dana, a contact of the first
        ("deal_contact_elsewhere", ids(ACC["vertex"], ACC["vertex2"], CON["dana"], OPP["pilot"])): (
            "warning", Decimal("30000.00"), "USD"),
        ("won_without_close_date", ids(OPP["fleet"])): ("critical", Decimal("120000.00"), "EUR"),
        ("open_past_close_date", ids(OPP["platform"])): ("warning", Decimal("85000.00"), "EUR"),
        ("lead_already_contact", ids(LEA["lars"], CON["lars"])): ("warning", Decimal(0), ""),
        ("lead_same_email", ids(LEA["ana"], LEA["ana2"])): ("warning", Decimal(0), ""),
        ("lead_no_owner", ids(LEA["tom"])): ("warning", Decimal(0), ""),
        ("lead_inactive_owner", ids(LEA["ana"])): ("warning", Decimal(0), ""),
    }  # fmt: skip


# --- ids --------------------------------------------------------------------------------


def test_a_15_character_id_gets_salesforces_checksum_suffix():
    # Pairs as Salesforce's CASESAFEID() gives them.
    assert to18("a0RE000000IJmcN") == "a0RE000000IJmcNMAT"
    assert to18("001M000000qfPyS") == "001M000000qfPySIAU"
    assert to18("AbCdEfGhIjKlMnO") == "AbCdEfGhIjKlMnOVKV"
    assert to18("0015g00000AbCdE") == "0015g00000AbCdEAAV"
    assert to18("0015g00000AbCdEAAV") == "0015g00000AbCdEAAV"
    for bad in ("", "001", "0015g00000AbCd!", "0015g00000AbCdEAA", "ǅ015g00000AbCdE"):
        assert to18(bad) is None


def test_a_reports_15_character_ids_name_the_exports_18_character_records():
    exported = parse(SHAPES["data-export-zip"]())
    reported = parse(SHAPES["reports"]())
    for name in ("companies", "contacts", "deals", "leads"):
        ids = sorted(r.id for r in getattr(exported, name))
        assert sorted(r.id for r in getattr(reported, name)) == ids
        assert all(len(i) == 18 for i in ids)
    assert {c.company_id for c in reported.contacts} == {c.company_id for c in exported.contacts}


def test_one_record_under_its_15_and_18_character_ids_is_a_duplicate():
    account = b'"Id","Name"\n"0015g00000AbCdE","A"\n"0015g00000AbCdEAAV","B"\n'
    with pytest.raises(IngestError) as error:
        parse([UploadedFile("Account.csv", account)])
    assert error.value.errors == [
        'Account.csv row 3 (Id): duplicate of row 2 ("0015g00000AbCdEAAV")'
    ]


# --- deleted and merged rows --------------------------------------------------------------


def test_deleted_and_merged_away_rows_are_not_live_records():
    batch = parse(SHAPES["data-loader-csv"]())
    assert to18(ACC["halv_old"]) not in {c.id for c in batch.companies}  # merged into Halvorsen
    assert to18(CON["old"]) not in {c.id for c in batch.contacts}  # in the recycle bin
    assert to18(OPP["gone"]) not in {d.id for d in batch.deals}
    assert batch.counts == {"companies": 4, "contacts": 5, "deals": 5, "leads": 5}


def test_a_reference_to_a_merged_away_record_names_its_master():
    accounts = (
        '"Id","IsDeleted","MasterRecordId","Name"\n'
        '"0015g00000AbCdEAAV","false","","Halvorsen Marine"\n'
        '"0015g00000XyZwQAAA","true","0015g00000AbCdEAAV","Halvorsen Marine AS"\n'
    )
    contacts = '"Id","AccountId","Email"\n"0035g00000AbCdEAAV","0015g00000XyZwQ","a@b.example"\n'
    batch = parse(
        [
            UploadedFile("Account.csv", accounts.encode()),
            UploadedFile("Contact.csv", contacts.encode()),
        ]
    )
    assert [c.id for c in batch.companies] == ["0015g00000AbCdEAAV"]
    assert batch.contacts[0].company_id == "0015g00000AbCdEAAV"
    assert not [f for f in review(batch) if f.kind == "dangling_reference"]


# --- owners, stages, contact roles, the columns kept ---------------------------------------


def test_owner_ids_are_names_through_the_users_and_a_leads_owner_is_active_or_not():
    batch = parse(SHAPES["data-export-zip"]())
    assert {c.owner for c in batch.companies} == {"Dana Whitfield", "Marco Ferri"}
    leads = {lead.id: lead for lead in batch.leads}
    assert leads[to18(LEA["ana"])].owner == "Priya Nair"
    assert leads[to18(LEA["ana"])].owner_active is False
    assert leads[to18(LEA["tom"])].owner is None


def test_without_the_users_a_leads_owner_stays_its_id_and_the_inactive_rule_is_unknown():
    files = {n: d for n, d in org.data_export().items() if n != "User.csv"}
    batch = parse(loose(files))
    assert batch.leads[1].owner == to18(org.USR["priya"])
    assert "lead_inactive_owner" not in {f.kind for f in review(batch)}
    (missing,) = missing_columns(batch)
    assert missing["field"] == "ownerActive"
    assert missing["switched_off"] == ["lead_inactive_owner"]
    assert missing["properties"] == ["User.IsActive"]


def test_the_orgs_stage_definitions_are_the_pipeline_with_its_own_stage():
    batch = parse(SHAPES["data-loader-csv"]())
    pipeline = batch.pipelines["default"]
    pilot = pipeline.find_stage("Pilot Running")
    assert (pilot.closed, pilot.won, pilot.probability) == (False, False, 0.6)
    assert pipeline.find_stage("Closed Won").won
    assert batch.stage_sources() == {"export": 5}
    assert batch.uploaded_pipelines == [pipeline]  # a dataset learns them


def test_without_stage_definitions_the_opportunities_own_closed_and_won_say_the_state():
    batch = parse(SHAPES["data-export-zip"]())
    assert batch.pipelines == {}
    assert batch.stage_sources() == {"state_columns": 5}
    deal = next(d for d in batch.deals if d.stage == "Pilot Running")
    assert batch.is_open(deal)


def test_a_deals_contacts_are_its_contact_roles_the_primary_first():
    for shape in SHAPES:
        batch = parse(SHAPES[shape]())
        fleet = next(d for d in batch.deals if d.id == to18(OPP["fleet"]))
        assert fleet.contact_ids == [to18(CON["lars"]), to18(CON["ingrid"])], shape
        assert fleet.currency == "EUR" and fleet.amount == Decimal("120000.00")


def test_every_other_column_is_kept_and_each_header_names_its_field_for_team_rules():
    batch = parse(SHAPES["data-export-zip"]())
    deal = batch.deals[0]
    assert deal.extra["ForecastCategory"] == "Pipeline"
    assert deal.extra["IsClosed"] == "false"
    assert batch.field_headers["deals"]["StageName"] == "stage"
    assert batch.field_headers["leads"]["OwnerId"] == "owner"
    assert batch.ignored_columns["Task.csv"] == ["(a file of an object revreview does not read)"]
    reported = parse(SHAPES["reports"]())
    assert reported.field_headers["deals"]["Close Date"] == "closeDate"
    assert reported.deals[0].extra["Fiscal Period"] == "Q3-2026"
    tables = build_tables(batch)
    rows = tables.connection.execute(
        "SELECT id FROM leads WHERE owner_active = false AND \"Status\" LIKE 'Open%'"
    ).fetchall()
    assert rows == [(to18(LEA["ana"]),)]
    assert tables.aliases["deals"]["StageName"] == "stage"


def test_a_reports_footer_is_not_read():
    batch = parse(SHAPES["reports"]())
    assert len(batch.deals) == len(org.OPPORTUNITIES)
    assert batch.source == "salesforce-report"


# --- in Salesforce's words ---------------------------------------------------------------


def test_findings_say_account_and_opportunity_for_salesforce_and_company_and_deal_for_hubspot(
    native,
):
    titles = {f.kind: f.title for f in review(parse(SHAPES["data-export-zip"]()))}
    assert titles["company_same_domain"].startswith("2 accounts share the domain")
    assert titles["won_without_close_date"].startswith('Won opportunity "Halvorsen')
    hubspot = {f.kind: f.title for f in native}
    assert hubspot["company_same_domain"].startswith("2 companies share the domain")
    assert hubspot["won_without_close_date"].startswith('Won deal "Halvorsen')


# --- bad input ---------------------------------------------------------------------------


def test_an_id_that_is_not_salesforces_is_named_by_file_row_and_column():
    with pytest.raises(IngestError) as error:
        parse([UploadedFile("Lead.csv", b'"Id","Email"\n"lead-1","a@b.example"\n')])
    assert error.value.errors == [
        'Lead.csv row 2 (Id): not a Salesforce id (15 or 18 letters and digits): "lead-1"'
    ]


def test_malformed_values_are_findings_not_crashes():
    huge = "9" * 5000
    contacts = (
        '"Id","AccountId","Email","FirstName"\n"0035g00000AbCdE","n/a","x@\x00.example","A\ud800"\n'
    )
    deals = (
        '"Id","Name","Amount","StageName","CloseDate"\n'
        f'"0065g00000AbCdE","D","{huge}","Prospecting","soon"\n'
    )
    batch = parse(
        [
            UploadedFile("Contact.csv", contacts.encode("utf-8", "surrogatepass")),
            UploadedFile("Opportunity.csv", deals.encode()),
        ]
    )
    paths = sorted(p.path for p in batch.value_problems)
    assert "contacts[0].companyId" in paths
    assert "deals[0].amount" in paths and "deals[0].closeDate" in paths
    assert "invalid_value" in {f.kind for f in review(batch)}


def test_a_hubspot_export_saved_as_contact_csv_is_still_hubspots():
    hubspot = b"Record ID,First Name,Last Name,Email\n101,Dana,Kim,dana@acme.example\n"
    batch = parse([UploadedFile("Contact.csv", hubspot)])
    assert batch.crm == "hubspot" and batch.contacts[0].id == "101"


def test_a_data_export_in_several_zips_is_read_as_one():
    files = org.data_export()
    first = {n: d for n, d in files.items() if n in ("Account.csv", "Contact.csv", "User.csv")}
    second = {n: d for n, d in files.items() if n not in first}
    (part1,), (part2,) = zipped(first), zipped(second)
    parts = [UploadedFile("WE_1.ZIP", part1.data), UploadedFile("WE_2.ZIP", part2.data)]
    assert facts(review(parse(parts))) == facts(review(parse(SHAPES["data-export-zip"]())))


def without_currency(files: dict[str, bytes]) -> dict[str, bytes]:
    """The org as a single-currency org exports it: no CurrencyIsoCode column anywhere."""
    import csv

    out = {}
    for name, data in files.items():
        table = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
        if table and "CurrencyIsoCode" in table[0]:
            at = table[0].index("CurrencyIsoCode")
            table = [row[:at] + row[at + 1 :] for row in table]
        text = io.StringIO()
        csv.writer(text).writerows(table)
        out[name] = text.getvalue().encode("utf-8")
    return out


@pytest.mark.parametrize(("code", "currency"), [("EUR", "EUR"), ("EURO", "USD")])
def test_a_single_currency_orgs_amounts_are_in_the_currency_organization_csv_names(code, currency):
    files = without_currency(org.data_export(loader=True))
    files["Organization.csv"] = (
        f"Id,Name,DefaultCurrencyIsoCode\n00D5g000004ABCDEAZ,Acme,{code}\n".encode()
    )
    batch = parse(loose(files))
    assert {batch.currency_of(deal) for deal in batch.deals} == {currency}
    assert "Organization.csv" not in batch.ignored_columns
    money = [f for f in review(batch) if f.amount_at_risk]
    assert money and {f.currency for f in money} == {currency}


# --- a list the export left out -----------------------------------------------------------


def test_an_export_without_lead_csv_lacks_the_leads_list_and_its_lead_rules_did_not_run():
    files = {n: d for n, d in org.data_export().items() if n != "Lead.csv"}
    batch = parse(loose(files))
    whole = parse(SHAPES["data-export-zip"]())

    assert batch.partial == ["leads"] and whole.partial == []
    assert [(e["kind"], e["why"]) for e in lists_not_run(batch.partial, batch.source)] == [
        (kind, "the export has no leads") for kind in LEAD_KINDS
    ]
    assert lists_not_run(whole.partial, whole.source) == []
    # A team's rule over leads could not run either (the same absent lists).
    assert "leads" in absent_lists(batch.partial, batch.source)
    assert "leads" not in absent_lists(whole.partial, whole.source)


def test_a_hubspot_batch_never_ran_the_lead_rules():
    batch = parse([UploadedFile("contacts.csv", b"Record ID,Email\n101,dana@acme.example\n")])
    not_run = lists_not_run(batch.partial, batch.source)
    assert [(e["kind"], e["why"]) for e in not_run if e["list"] == "leads"] == [
        (kind, "only Salesforce has leads") for kind in LEAD_KINDS
    ]
    assert {e["list"] for e in not_run} == {"companies", "deals", "leads"}
    assert "contact_same_email" not in {e["kind"] for e in not_run}
