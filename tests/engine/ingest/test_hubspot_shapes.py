"""The shapes of real HubSpot exports one at a time: ambiguous amounts, the order of day
and month, associations by name, Website URL, currencies, partial and localised exports."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from decimal import Decimal

from reviews.engine.ingest.written import parse_written_amount, written_decimal_separator
from tests.engine.ingest.helpers import RECEIVED, errors_of, parse_files
from tests.engine.ingest.hubspot_exports import api_files, csv_files
from tests.engine.ingest.test_real_exports import keys, parse_upload_files, review

DEALS = "Record ID,Deal Name,Deal Stage,Amount,Close Date\n"


def test_amount_that_stays_ambiguous_is_an_invalid_value_naming_both_readings():
    batch = parse_files(("deals.csv", DEALS + "1,A,Closed Won,410.000,2026-07-31\n"))

    assert batch.deals[0].amount is None
    assert [(p.path, p.message) for p in batch.value_problems] == [
        (
            "deals[0].amount",
            "ambiguous amount: \"410.000\" is 410 (decimal '.') or 410000 (thousands '.'); "
            "nothing in the file settles which",
        )
    ]
    assert ("pipeline", "invalid_value", "warning", ("1",)) in keys(review(batch))


def test_amount_settled_by_another_value_in_the_file():
    rows = "1,A,Closed Won,410.000,2026-07-31\n2,B,Closed Won,1.250.000,2026-07-31\n"

    batch = parse_files(("deals.csv", DEALS + rows))

    assert [d.amount for d in batch.deals] == [Decimal(410000), Decimal(1250000)]
    assert batch.value_problems == []


def test_amounts_as_people_write_them():
    cases = {
        "$410,000.00": Decimal("410000.00"),
        "-$5,000.00": Decimal("-5000.00"),
        "($5,000.00)": Decimal("-5000.00"),
        "$-5,000.00": Decimal("-5000.00"),
        "410.000,00": Decimal("410000.00"),
        "410 000,50 €": Decimal("410000.50"),
        "EUR 1.234,5": Decimal("1234.5"),
        "1,5": Decimal("1.5"),
        "410000": Decimal(410000),
    }
    assert {text: parse_written_amount(text, None) for text in cases} == cases
    assert parse_written_amount("250,000", ".") == Decimal(250000)
    assert parse_written_amount("250,000", ",") == Decimal("250.000")
    assert parse_written_amount("41O000", None).message == 'not a number: "41O000"'
    assert written_decimal_separator("250,000") is None


def test_day_and_month_order_settled_by_the_file():
    rows = "1,A,Closed Won,1,13/07/2026\n2,B,Closed Won,1,07/08/2026 14:30\n"

    batch = parse_files(("deals.csv", DEALS + rows))

    assert [d.close_date for d in batch.deals] == [date(2026, 7, 13), date(2026, 8, 7)]


def test_day_and_month_order_from_the_setting_when_nothing_settles_it(settings):
    rows = "1,A,Closed Won,1,07/08/2026\n2,B,Closed Won,1,31.07.2026\n"

    us = parse_files(("deals.csv", DEALS + rows.replace("31.07.2026", "07/09/2026")))
    settings.CSV_DATE_ORDER = "DMY"
    european = parse_files(("deals.csv", DEALS + rows))

    assert [d.close_date for d in us.deals] == [date(2026, 7, 8), date(2026, 7, 9)]
    assert [d.close_date for d in european.deals] == [date(2026, 8, 7), date(2026, 7, 31)]


def test_well_formed_values_raise_no_false_critical():
    rows = (
        '1,Vertex,Closed Won,"$410,000.00",07/31/2026\n'
        '2,Granite,Closed Won,"250,000.00",07/31/2026 10:00 AM\n'
    )

    batch = parse_files(("deals.csv", DEALS + rows), as_of=datetime(2026, 8, 1, tzinfo=UTC))

    assert batch.value_problems == []
    assert keys(review(batch)) == set()


def test_association_by_company_name_resolves_to_the_one_company():
    batch = parse_upload_files(csv_files(names_only=True))
    result = review(batch)

    company_of = {c.id: c.company_id for c in batch.contacts}
    # "Vertex Robotics" and "Vertex Robotics GmbH" are one name once the legal suffix
    # is folded away: no single company, so those contacts stay unresolved.
    assert company_of == {"7001": None, "7002": "9004", "7003": "9004", "7004": None, "7005": None}
    unresolved = [f for f in result.findings if f.kind == "unresolved_company_name"]
    assert [(f.record_ids, f.severity) for f in unresolved] == [(["7001", "7004"], "warning")]
    assert "2 companies have that name (9001, 9002)" in unresolved[0].detail
    found = keys(result)
    assert not any(kind == "dangling_reference" for _, kind, _, _ in found)
    assert ("attribution", "contact_wrong_company", "warning", ("7002", "9003", "9004")) in found


def test_unresolved_company_name_is_one_finding_per_name():
    companies = "Record ID,Company name\n1,Acme\n2,Acme Inc.\n3,Vertex\n"
    contacts = (
        "Record ID,Email,Associated Company\n"
        "11,a@x.example,Globex\n12,b@x.example,Globex\n13,c@x.example,ACME\n"
        "14,d@x.example,vertex\n"
    )

    batch = parse_files(("companies.csv", companies), ("contacts.csv", contacts))
    result = review(batch)

    assert {c.id: c.company_id for c in batch.contacts} == {
        "11": None, "12": None, "13": None, "14": "3"
    }  # fmt: skip
    unresolved = sorted(
        (f for f in result.findings if f.kind == "unresolved_company_name"),
        key=lambda f: len(f.record_ids),
    )
    assert [(f.record_ids, f.severity) for f in unresolved] == [
        (["13"], "warning"),
        (["11", "12"], "warning"),
    ]
    assert "'ACME'" in unresolved[0].title and "2 companies have that name (1, 2)" in (
        unresolved[0].detail
    )
    assert "'Globex'" in unresolved[1].title and "2 records" in unresolved[1].title
    assert not any(f.kind == "dangling_reference" for f in result.findings)


def test_website_url_is_the_domain_without_a_domain_column():
    companies = (
        "Record ID,Company name,Website URL\n"
        "1,Vertex Robotics,https://www.vertexrobotics.example/about\n"
        "2,Vertex Robotics GmbH,vertexrobotics.example\n"
    )

    batch = parse_files(("companies.csv", companies))

    assert batch.companies[0].domain == "https://www.vertexrobotics.example/about"
    assert ("dedup", "company_same_domain", "warning", ("1", "2")) in keys(review(batch))


def test_amount_in_company_currency_preferred_and_currency_kept():
    deals = (
        "Record ID,Deal Name,Deal Stage,Amount,Amount in company currency,Currency,Close Date,"
        "Associated Company IDs\n"
        '1,Berlin line,Contract Sent,"410.000,00","410.000,00",EUR,30.09.2026,9\n'
        '2,Boston line,Contract Sent,"100.000,00","92.000,00",USD,30.09.2026,9\n'
        '3,Boston line,Contract Sent,"100.000,00","92.000,00",USD,01.10.2026,9\n'
    )

    batch = parse_files(
        ("companies.csv", "Record ID,Company name\n9,Kranwerk\n"), ("deals.csv", deals)
    )
    result = review(batch)

    assert batch.currency == "EUR"
    assert [(d.amount, d.currency) for d in batch.deals] == [
        (Decimal("410000.00"), "EUR"),
        (Decimal("92000.00"), "EUR"),
        (Decimal("92000.00"), "EUR"),
    ]
    assert batch.deals[1].extra["deal currency"] == "USD"
    twice = next(f for f in result.findings if f.kind == "deal_entered_twice")
    assert (twice.amount_at_risk, twice.currency) == (Decimal("92000.00"), "EUR")
    assert "€92,000 is not counted twice" in twice.suggested_fix + twice.title
    assert "€92,000 at risk across 1 deal" in result.summary


def deals_reviewed(rows: str):
    """A deals export of these rows (of company 9) with its companies, and its review."""
    deals = (
        "Record ID,Deal Name,Deal Stage,Amount,Currency,Close Date,Associated Company IDs\n" + rows
    )
    batch = parse_files(("companies.csv", "Record ID,Company name\n9,K\n"), ("deals.csv", deals))
    return batch, review(batch)


def test_currencies_are_never_added_up():
    batch, result = deals_reviewed(
        "1,A,Contract Sent,-500,EUR,2026-09-30,9\n2,B,Contract Sent,-700,USD,2026-09-30,9\n"
    )

    assert [(d.currency, d.amount) for d in batch.deals] == [
        ("EUR", Decimal(-500)),
        ("USD", Decimal(-700)),
    ]
    assert "-€500" in result.findings[0].title + result.findings[1].title
    assert "-$700" in result.findings[0].title + result.findings[1].title


def test_partial_export_raises_no_reference_findings():
    contacts_only = [f for f in csv_files() if f[0] == "contacts.csv"]
    deals_only = [f for f in csv_files() if f[0] == "deals.csv"]

    contacts = parse_upload_files(contacts_only)
    deals = parse_upload_files(deals_only)

    assert contacts.partial == ["companies", "deals"]
    assert deals.partial == ["companies", "contacts"]
    for batch in (contacts, deals):
        found = keys(review(batch))
        assert not any(c == "attribution" for c, _, _, _ in found), found
    assert ("dedup", "contact_same_email", "warning", ("7001", "7004")) in keys(review(contacts))
    assert ("pipeline", "won_without_amount", "critical", ("5005",)) in keys(review(deals))


def test_unknown_language_names_the_headers_and_says_how_to_export():
    italian = "ID record,Nome dell'azienda,Nome di dominio dell'azienda\n1,Acme,acme.example\n"

    errors = errors_of(parse_files, ("aziende.csv", italian))

    assert len(errors) == 1
    assert "ID record, Nome dell'azienda, Nome di dominio dell'azienda" in errors[0]
    assert "English" in errors[0] and "internal property names" in errors[0]


def test_csv_as_of_is_the_newest_last_modified_date():
    batch = parse_upload_files(csv_files(style="excel_us"), as_of=None)
    api = parse_upload_files(api_files(), as_of=None)

    newest = datetime(2026, 7, 30, 10, 11, tzinfo=UTC)
    assert (batch.as_of, batch.as_of_source) == (newest, "last_modified")
    assert (api.as_of, api.as_of_source) == (newest, "last_modified")
    undated = parse_files(("contacts.csv", "Record ID,Email\n1,a@b.example\n"))
    assert (undated.as_of, undated.as_of_source) == (RECEIVED, "upload")


def test_api_json_structural_errors_name_the_record():
    errors = errors_of(
        parse_files,
        ("deals.json", '{"results": [{"id": "1", "properties": {}}, {"properties": {}}]}'),
    )

    assert errors == ["deals.json deals[1].id: missing or not a string: null"]


def test_json_batch_lists_the_fields_no_rule_reads():
    doc = {
        "companies": [{"id": "1", "name": "A", "industry": "X"}, {"id": "2", "country": "US"}],
        "contacts": [{"id": "3", "email": "a@b.example"}],
        "deals": [],
    }

    batch = parse_files(("batch.json", json.dumps(doc)))

    assert batch.ignored_columns == {"companies": ["country", "industry"]}
    assert batch.extra_of(batch.companies[0]) == {"industry": "X"}  # kept, only not read


def test_an_invalid_currency_code_is_an_invalid_value_and_its_amount_is_in_no_known_currency():
    batch, result = deals_reviewed(
        "1,A,Contract Sent,85000,EURO,2020-01-31,9\n2,B,Contract Sent,1000,USD,2020-01-31,9\n"
    )

    # As Salesforce's reader has it: ISO 4217's "no currency", not the batch's dollars.
    assert [(d.currency, d.amount) for d in batch.deals] == [
        ("XXX", Decimal(85000)),
        ("USD", Decimal(1000)),
    ]
    (invalid,) = [f for f in result.findings if f.kind == "invalid_value"]
    assert invalid.record_ids == ["1"]
    assert 'deals[0].currency: not a currency code: "EURO"' in invalid.detail
    late = {f.record_ids[0]: f for f in result.findings if f.kind == "open_past_close_date"}
    assert (late["1"].amount_at_risk, late["1"].currency) == (Decimal(85000), "XXX")
    assert (late["2"].amount_at_risk, late["2"].currency) == (Decimal(1000), "USD")
    assert "¤85,000" in result.summary and "$1,000" in result.summary
    assert "$86,000" not in result.summary and "$85,000" not in result.summary
