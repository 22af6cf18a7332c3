"""The lead rules (docs/rules.md), including what they must not flag, the CRM's words,
and leads in a JSON batch and in the tables."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from reviews.engine.batch import Lead
from reviews.engine.ingest import IngestError, UploadedFile, parse_upload
from reviews.engine.rules import Rules
from reviews.engine.specialists import attribution, dedup, detector
from reviews.engine.tables.build import OBJECTS, build_tables
from reviews.engine.tables.store import read_parquet, write_parquet
from reviews.engine.vocabulary import in_words
from tests.engine.specialists.factories import contact, make_batch


def lead(id: str, **kwargs) -> Lead:
    return Lead(id, 0, **kwargs)


def leads_batch(leads: list[Lead], contacts=(), source: str = "salesforce-export"):
    batch = make_batch(contacts=list(contacts), source=source)
    batch.leads = [Lead(**{**_fields(x), "index": i}) for i, x in enumerate(leads)]
    return batch


def _fields(record: Lead) -> dict:
    return {name: getattr(record, name) for name in Lead.__slots__}


def kinds(batch) -> list[tuple[str, list[str]]]:
    found = [*dedup.detect(batch, Rules()), *attribution.detect(batch, Rules())]
    return sorted((f.kind, f.record_ids) for f in found if f.kind.startswith("lead_"))


def test_a_lead_whose_email_is_a_contacts_is_already_a_contact():
    batch = leads_batch(
        [lead("00Q1", email=" Dana@Acme.example", owner="Sam", owner_active=True)],
        [contact("003A", email="dana@acme.example"), contact("003B", email="other@acme.example")],
    )
    assert kinds(batch) == [("lead_already_contact", ["003A", "00Q1"])]


def test_a_converted_lead_is_not_flagged_by_any_lead_rule():
    converted = dict(email="dana@acme.example", converted=True, owner=None)
    batch = leads_batch(
        [lead("00Q1", **converted), lead("00Q2", **converted)],
        [contact("003A", email="dana@acme.example")],
    )
    assert kinds(batch) == []


def test_leads_sharing_an_email_and_leads_without_one():
    batch = leads_batch(
        [
            lead("00Q1", email="a@x.example", owner="Sam"),
            lead("00Q2", email="A@X.example ", owner="Sam"),
            lead("00Q3", owner="Sam"),  # no email: nothing to compare
            lead("00Q4", owner="Sam"),
        ]
    )
    assert kinds(batch) == [("lead_same_email", ["00Q1", "00Q2"])]


def test_owners_missing_or_inactive_and_those_that_are_not():
    batch = leads_batch(
        [
            lead("00Q1", owner=None),
            lead("00Q2", owner="Priya Nair", owner_active=False),
            lead("00Q3", owner="Dana Whitfield", owner_active=True),
            lead("00Q4", owner="00G5g000001abcdEAA"),  # a queue: activity not known
        ]
    )
    assert kinds(batch) == [("lead_inactive_owner", ["00Q2"]), ("lead_no_owner", ["00Q1"])]


def test_a_blank_owner_is_none_and_a_converted_flag_not_known_is_an_open_lead():
    batch = leads_batch(
        [
            lead("00Q1", owner="", converted=None),
            lead("00Q2", owner=" ", owner_active=None),  # someone's, activity not known
        ]
    )
    assert kinds(batch) == [("lead_no_owner", ["00Q1"])]


def test_lead_groups_come_in_the_order_of_their_second_lead():
    batch = leads_batch(
        [
            lead("00Q1", email="one@x.example", owner="Sam"),
            lead("00Q2", email="two@x.example", owner="Sam"),
            lead("00Q3", email="two@x.example", owner="Sam"),
            lead("00Q4", email="one@x.example", owner="Sam"),
        ]
    )
    found = [f.record_ids for f in dedup.detect(batch, Rules()) if f.kind == "lead_same_email"]
    assert found == [["00Q2", "00Q3"], ["00Q1", "00Q4"]]


def test_a_batch_without_leads_finds_no_lead_problem_and_its_text_is_hubspots():
    batch = make_batch(contacts=[contact("ct_1", email="a@x.example")])
    assert batch.leads == [] and kinds(batch) == []
    assert "leads" not in batch.counts


def test_the_crms_words_keep_capitals_and_leave_other_words_alone():
    text = "Deal deals COMPANY companies; a dealer's company-wide Opportunity"
    assert in_words(text, "salesforce") == (
        "Opportunity opportunities ACCOUNT accounts; a dealer's account-wide Opportunity"
    )
    assert in_words(text, "hubspot") == text


def test_a_lead_finding_names_the_lead():
    batch = leads_batch([lead("00Q1", owner=None)])
    (found,) = detector("attribution")(batch, Rules())
    assert found.title == "Lead 00Q1 has no owner"


# --- leads in a JSON batch and in the tables ---------------------------------------------

NOW = datetime(2026, 8, 1, tzinfo=UTC)


def parse(document: dict):
    return parse_upload(
        [UploadedFile("b.json", json.dumps(document).encode())], as_of=None, received_at=NOW
    )


def test_a_json_batch_may_carry_leads_with_their_fields_and_unknown_ones_kept():
    batch = parse(
        {
            "companies": [],
            "contacts": [],
            "deals": [],
            "leads": [
                {"id": "00Q1", "email": "a@x.example", "ownerActive": False, "owner": "Priya",
                 "isConverted": "false", "Status": "Open"},
                {"id": "00Q2", "email": "not an email", "isConverted": "maybe"},
            ],
        }
    )  # fmt: skip
    first, second = batch.leads
    assert (first.owner_active, first.converted, batch.extra_of(first)) == (
        False,
        False,
        {"Status": "Open"},
    )
    assert sorted(p.path for p in batch.value_problems) == [
        "leads[1].email",
        "leads[1].isConverted",
    ]
    assert batch.ignored_columns == {"leads": ["Status"]}


@pytest.mark.parametrize(
    ("leads", "error"),
    [
        ({"id": "00Q1"}, 'leads: not a list: {"id": "00Q1"}'),
        ([{"id": "00Q1"}, {"id": "00Q1"}], 'leads[1].id: duplicate of leads[0] ("00Q1")'),
        ([{"email": "a@x.example"}], "leads[0].id: missing"),
    ],
)
def test_a_malformed_leads_list_is_refused_naming_the_record(leads, error):
    with pytest.raises(IngestError) as refused:
        parse({"companies": [], "contacts": [], "deals": [], "leads": leads})
    assert refused.value.errors == [error]


def test_every_batch_has_a_leads_table_empty_for_hubspot():
    assert OBJECTS[-1] == "leads"
    empty = build_tables(make_batch())
    assert empty.connection.execute("SELECT count(*) FROM leads").fetchone() == (0,)
    assert ("owner_active", "BOOLEAN") in empty.connection.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name='leads'"
    ).fetchall()


def test_tables_kept_before_leads_were_read_load_with_an_empty_leads_table(tmp_path):
    folder = tmp_path / "batch-1"
    write_parquet(build_tables(make_batch()), folder)
    (folder / "leads.parquet").unlink()  # as a batch kept before this change
    tables = read_parquet(folder)
    assert tables.connection.execute("SELECT count(*) FROM leads").fetchone() == (0,)
    assert "owner_active" in tables.columns("leads")
