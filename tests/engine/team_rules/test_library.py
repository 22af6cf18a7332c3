"""The library of ready rules (reviews/engine/team_rules/library/), each file tested on
its own on a HubSpot CSV export: it loads, and flags exactly the records it describes."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from reviews.engine.ingest import UploadedFile, parse_upload
from reviews.engine.tables.build import build_tables
from reviews.engine.team_rules.rulefile import load
from reviews.engine.team_rules.run import COULD_NOT_RUN, RAN, team_findings
from tests.engine.team_rules.exports import AS_OF as AS_OF_TIME
from tests.engine.team_rules.exports import COMPANIES, CONTACTS, DEALS, export_tables

LIBRARY = Path(__file__).resolve().parents[3] / "reviews" / "engine" / "team_rules" / "library"
AS_OF = dt.date(2026, 8, 1)

# The base export and a few records that each break one library rule.
LIBRARY_COMPANIES = [
    *COMPANIES,
    ["9005", "Acme Inc", "acme_inc.com", "Deutschland", "", "Customer", "Ben Li", "", "",
     "2026-07-01 10:00"],
    ["9006", "Bolt", "https://www.bolt.example/about", "U.S.", "", "Lead", "Ben Li", "", "",
     "2026-07-01 10:00"],
    ["9007", "Cobalt", "COBALT.EXAMPLE", "gb", "", "customer", "Ben Li", "", "",
     "2026-07-01 10:00"],
]  # fmt: skip
LIBRARY_CONTACTS = [
    *CONTACTS,
    ["7004", "Ann", "Lee", "ann@acme.c", "+44 20 7946 0958", "Lead", "Ben Li", "9005"],
    ["7005", "Bo", "Ek", "bo@cobalt.example", "+442079460958", "Customer", "Ben Li", "9007"],
]  # fmt: skip
LIBRARY_DEALS = [
    *DEALS,
    # a second currency: the account's currency cannot be told, 5003's and 5007's unknown
    ["5006", "Cobalt — expansion", "30000", "GBP", "Closed Won", "2026-07-15",
     "Sales Pipeline", "Ben Li", "", "newbusiness", "9007", "7005"],
    ["5007", "Bolt — pilot", "9000", "", "Decision Maker Bought-In", "",
     "Sales Pipeline", "Ben Li", "", "newbusiness", "9006", "7004"],
]  # fmt: skip

EXPECTED = {
    "required_fields_by_stage.yaml": {"late_stage_deal_incomplete": ["5002", "5007"]},
    "email_format.yaml": {"email_not_deliverable_format": ["7004"]},
    "phone_e164.yaml": {"phone_not_e164": ["7002", "7004"]},
    "website_domain.yaml": {"domain_not_a_domain": ["9005", "9006"]},
    "country_iso.yaml": {"country_not_iso": ["9005", "9006"]},
    "customer_without_won_deal.yaml": {"customer_without_won_deal": ["9002", "9005"]},
    "record_without_owner.yaml": {
        "company_without_owner": ["9003"],
        "contact_without_owner": ["7002"],
        "open_deal_without_owner": ["5002", "5003"],
    },
    "company_without_domain.yaml": {"company_without_domain": ["9003"]},
    "deal_without_contact.yaml": {"deal_without_contact": ["5002", "5005"]},
    "amount_without_currency.yaml": {"amount_without_currency": ["5003", "5007"]},
}


def test_every_library_file_is_tested():
    assert sorted(path.name for path in LIBRARY.glob("*.yaml")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_library_rule_flags_exactly_what_it_describes(name):
    rules = load((LIBRARY / name).read_bytes())
    tables = export_tables(
        companies=LIBRARY_COMPANIES, contacts=LIBRARY_CONTACTS, deals=LIBRARY_DEALS
    )
    findings, report = team_findings(tables, rules, AS_OF, seconds=10, memory_mb=256)
    assert [entry["status"] for entry in report] == [RAN] * len(rules), report
    flagged: dict[str, list[str]] = {rule.id: [] for rule in rules}
    for finding in findings:
        flagged[finding.kind] += finding.record_ids
    assert flagged == EXPECTED[name]


def test_a_single_currency_export_without_a_currency_column_has_no_amount_without_one():
    samples = Path(__file__).resolve().parents[3] / "samples" / "hubspot"
    files = [UploadedFile(p.name, p.read_bytes()) for p in sorted(samples.glob("*.csv"))]
    batch = parse_upload(files, as_of=AS_OF_TIME, received_at=AS_OF_TIME)
    assert any(deal.amount for deal in batch.deals)
    rules = load((LIBRARY / "amount_without_currency.yaml").read_bytes())
    findings, report = team_findings(build_tables(batch), rules, AS_OF, seconds=10, memory_mb=256)
    assert findings == []
    assert [(r["status"], r["why"]) for r in report] == [
        (COULD_NOT_RUN, "the export's deals have no column for `currency`")
    ]
