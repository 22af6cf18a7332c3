"""Hostile values at ingest: NUL, lone surrogates and absurd lengths are made safe or
reported as invalid values, never an exception and never text that cannot be stored."""

from __future__ import annotations

import json

import pytest

from reviews.engine.batch import ValueProblem
from reviews.engine.ingest.safe_text import UNSAFE_MESSAGE
from reviews.engine.storable import may_hold_unstorable
from reviews.engine.storable import storable as escaped
from reviews.engine.tables.build import build_tables
from tests.engine.ingest import hostile_spreadsheets as hostile
from tests.engine.ingest.helpers import batch_doc, errors_of, parse_files, parse_json, zipped

NUL = "\x00"
SURROGATE = "\udc80"


def storable(text: str) -> bool:
    """What Postgres needs of text: UTF-8 encodable, no NUL."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return NUL not in text


def raw_json(doc: dict) -> bytes:
    # json.dumps writes NUL and lone surrogates as \\u escapes, as a real export would.
    return json.dumps(doc).encode()


def test_storable_keeps_the_character_visible_and_distinct():
    assert escaped("Renewal\x00") == "Renewal\\u0000"
    assert escaped("a\ud800b\udfff") == "a\\ud800b\\udfff"
    assert escaped("plain ✓ 😀") == "plain ✓ 😀"


def test_may_hold_unstorable_sees_json_escapes_and_raw_nul():
    assert may_hold_unstorable(b'{"a": "x\\u0000"}')
    assert may_hold_unstorable(b'{"a": "x\\uD83D"}')
    assert may_hold_unstorable(b"a,b\n1,\x00\n")
    assert not may_hold_unstorable(b'{"a": "caf\\u00e9 \\ud83d\\ude00"}'[:20])
    assert not may_hold_unstorable(b'{"a": "caf\\u00e9"}')


def test_nul_in_deal_names_kept_visible_and_reported():
    doc = batch_doc(
        deals=[
            {"id": "dl_1", "name": "Renewal\x00", "amount": 5000},
            {"id": "dl_2", "name": "Renewal\x00", "amount": 5000},
        ]
    )

    batch = parse_files(("batch.json", raw_json(doc)))

    assert [d.name for d in batch.deals] == ["Renewal\\u0000", "Renewal\\u0000"]
    assert batch.value_problems == [
        ValueProblem("dedup", "dl_1", "deals[0].name", UNSAFE_MESSAGE),
        ValueProblem("dedup", "dl_2", "deals[1].name", UNSAFE_MESSAGE),
    ]


def test_a_dataset_name_with_unstorable_text_is_refused_by_name():
    # A dataset is the key that ties syncs together: it is refused, not rewritten.
    assert errors_of(parse_files, ("batch.json", raw_json(batch_doc(dataset="acme\ud800")))) == [
        'dataset: name holds a control character or a lone surrogate: "acme\\ud800"'
    ]


def test_surrogates_everywhere_in_json_made_storable():
    doc = batch_doc(
        id="batch\udc80",
        source="hub\x00spot",
        companies=[{"id": "co\udc81", "name": "Acme", "notes\x00": {"deep": ["x\ud801"]}}],
        contacts=[
            {"id": "ct_1", "email": "a\x00@acme.example", "companyId": "co\udc81"},
        ],
        deals=[
            {
                "id": "dl_1",
                "stage": "won\x00",
                "contactIds": ["ct_1", "ct\udc82"],
                "pipeline": "p\x00",
            }
        ],
        pipelines=[{"id": "p\x00", "stages": [{"id": "won\x00", "closed": True, "won": True}]}],
    )

    batch = parse_files(("batch.json", raw_json(doc)))

    assert (batch.id, batch.source) == ("batch\\udc80", "hub\\u0000spot")
    company = batch.companies[0]
    assert company.id == "co\\udc81"
    assert batch.extra_of(company) == {"notes\\u0000": {"deep": ["x\\ud801"]}}
    assert batch.contacts[0].company_id == "co\\udc81"  # the reference still resolves
    deal = batch.deals[0]
    assert deal.contact_ids == ["ct_1", "ct\\udc82"]
    assert batch.stage_of(deal).won  # stage and pipeline cleaned alike still match
    paths = {(p.record_id, p.path) for p in batch.value_problems}
    assert {
        ("", "id"),
        ("", "source"),
        ("co\\udc81", "companies[0].id"),
        ("co\\udc81", "companies[0].notes\\u0000"),
        ("ct_1", "contacts[0].email"),
        ("ct_1", "contacts[0].companyId"),
        ("dl_1", "deals[0].stage"),
        ("dl_1", "deals[0].contactIds"),
        ("dl_1", "deals[0].pipeline"),
    } <= paths
    every_text = json.dumps(
        [
            [p.path, p.message, p.record_id] for p in batch.value_problems
        ]  # the email's own "not an email" message quotes the NUL
        + [batch.extra_of(company), deal.contact_ids, deal.stage, batch.id, batch.source],
        ensure_ascii=False,
    )
    assert storable(every_text)


def test_duplicate_id_with_surrogate_is_a_storable_error():
    doc = batch_doc(deals=[{"id": "dl\udc80"}, {"id": "dl\udc80"}])

    errors = errors_of(parse_files, ("batch.json", raw_json(doc)))

    assert errors == ['deals[1].id: duplicate of deals[0] ("dl\\udc80")']


def test_csv_nul_in_a_header_and_a_cell():
    csv = "Record ID,Deal Name,Notes\x00\n301,Big\x00 deal,x\n"

    batch = parse_files(("deals.csv", csv))

    deal = batch.deals[0]
    assert (deal.name, batch.extra_of(deal)) == ("Big\\u0000 deal", {"Notes\\u0000": "x"})
    assert {p.path for p in batch.value_problems} == {"deals[0].name", "deals[0].Notes\\u0000"}


def test_csv_nul_in_an_unknown_header_error_is_storable():
    errors = errors_of(parse_files, ("x.csv", "Col\x00umn,Other\n1,2\n"))

    assert storable(errors[0]) and "Col\\u0000umn" in errors[0]


def test_zip_member_name_not_utf8_is_a_named_error():
    archive = bytearray(zipped({"deals.csv": "Record ID,Deal Name\n1,x\n"}))
    # Mark the member names UTF-8 (general purpose flag bit 11) and break the name.
    for header in (b"PK\x03\x04", b"PK\x01\x02"):
        at = archive.find(header)
        flags_at = at + (6 if header == b"PK\x03\x04" else 8)
        archive[flags_at + 1] |= 0x08  # bit 11: in the second byte
        name_at = archive.find(b"deals.csv", at)
        archive[name_at] = 0xFF

    errors = errors_of(parse_files, ("export.zip", bytes(archive)))

    assert errors[0].startswith("export.zip: not a readable ZIP file")


@pytest.mark.parametrize("field", ["closeDate", "amount"])
def test_5000_digit_json_number_is_an_invalid_value(field):
    data = b'{"companies": [], "contacts": [], "deals": [{"id": "dl_1", "%s": %s}]}' % (
        field.encode(),
        b"9" * 5000,
    )

    batch = parse_files(("batch.json", data))

    (problem,) = batch.value_problems
    assert (problem.record_id, problem.path) == ("dl_1", f"deals[0].{field}")
    assert getattr(batch.deals[0], {"closeDate": "close_date", "amount": "amount"}[field]) is None


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("closeDate", "9" * 5000),
        ("closeDate", "2026-01-01T00:00:00." + "1" * 5000),
        ("amount", "9" * 5000),
        ("amount", "1" * 13),
        ("amount", -(10**13)),
    ],
)
def test_absurd_strings_are_invalid_values(field, value):
    batch = parse_json(batch_doc(deals=[{"id": "dl_1", field: value}]))

    (problem,) = batch.value_problems
    assert problem.path == f"deals[0].{field}"
    assert len(problem.message) < 200


def test_5000_digit_exported_at_is_a_named_error():
    data = b'{"exportedAt": %s, "companies": [], "contacts": [], "deals": []}' % (b"1" * 5000)
    errors = errors_of(parse_files, ("batch.json", data))

    assert errors == ['exportedAt: not a date: "' + "1" * 58 + "…"]


def test_5000_digit_exported_at_string_is_a_named_error():
    errors = errors_of(parse_json, batch_doc(exportedAt="1" * 5000))

    assert errors[0].startswith("exportedAt: not a date: ")


def _xlsx(amount_cell: str) -> bytes:
    row = f'<row r="2"><c r="A2"><v>40001</v></c>{amount_cell}</row>'
    return hostile.replaced(
        hostile.deals_xlsx(), {hostile.SHEET: hostile.sheet_xml(hostile.HEADER_ROW + row)}
    )


# One deal with `amount` as each reader meets it (docs/input.md, "Absurd numbers and dates").
READERS = {
    "json batch": lambda amount: (
        "batch.json",
        '{"companies": [], "contacts": [], "deals": [{"id": "1", "amount": ' + amount + "}]}",
    ),
    "hubspot csv": lambda amount: ("deals.csv", f"Record ID,Deal Name,Amount\n1,D,{amount}\n"),
    "hubspot csv, written": lambda amount: (
        "deals.csv",
        f'Record ID,Deal Name,Amount\n1,D,"${int(amount[:40]):,}"\n',
    ),
    "xlsx number": lambda amount: ("deals.xlsx", _xlsx(f'<c r="C2"><v>{amount}</v></c>')),
    "xlsx text": lambda amount: (
        "deals.xlsx",
        _xlsx(f'<c r="C2" t="inlineStr"><is><t>{amount}</t></is></c>'),
    ),
    "hubspot api json": lambda amount: (
        "deals.json",
        json.dumps({"results": [{"id": "1", "properties": {"amount": amount}}]}),
    ),
    "salesforce csv": lambda amount: (
        "Opportunity.csv",
        f'"Id","Name","Amount"\n"0065g00000AbCdE","D","{amount}"\n',
    ),
}


@pytest.mark.parametrize("amount", ["1" + "0" * 39, "9" * 5000, "-" + "9" * 33])
@pytest.mark.parametrize("reader", READERS)
def test_every_reader_flags_an_amount_past_the_bound_and_the_tables_still_build(reader, amount):
    # 10**39 is past DECIMAL(38, 6), the type the batch's tables keep an amount in: every
    # reader bounds amounts (values.MAX_AMOUNT), so build_tables never meets one.
    batch = parse_files(READERS[reader](amount))

    (deal,) = batch.deals
    (problem,) = [p for p in batch.value_problems if p.path == "deals[0].amount"]
    assert deal.amount is None
    assert problem.message.startswith(("not a plausible amount", "not a number"))
    tables = build_tables(batch)
    assert tables.connection.execute("SELECT amount FROM deals").fetchall() == [(None,)]
