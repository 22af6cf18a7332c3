"""Running team rules over the tables of a HubSpot CSV export with custom columns:
exactly the records described, at their severity; a rule the batch cannot answer is
reported as could not run; the sandbox holds."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pytest

from reviews.engine.ingest import parse_upload
from reviews.engine.tables.build import build_tables
from reviews.engine.tables.sandbox import lock
from reviews.engine.team_rules.rulefile import load
from reviews.engine.team_rules.run import (
    COULD_NOT_RUN,
    RAN,
    absent_lists,
    run_rule,
    team_findings,
)
from tests.engine.team_rules.exports import AS_OF as AS_OF_TIME
from tests.engine.team_rules.exports import export_files, export_tables

AS_OF = dt.date(2026, 8, 1)
LIBRARY = Path(__file__).resolve().parents[3] / "reviews" / "engine" / "team_rules" / "library"


def rules(*items: dict) -> list:
    base = {"severity": "warning", "title": "t", "fix": "f"}
    return load(json.dumps({"rules": [{**base, **item} for item in items]}))


def flagged(tables, *items: dict) -> dict[str, list[str]]:
    found, report = team_findings(tables, rules(*items), AS_OF, seconds=10, memory_mb=256)
    assert all(r["status"] == RAN for r in report), report
    out: dict[str, list[str]] = {r["id"]: [] for r in report}
    for finding in found:
        out[finding.kind] += finding.record_ids
    return out


def test_custom_columns_and_as_of_flag_exactly_the_records_described():
    tables = export_tables()
    assert flagged(
        tables,
        {
            "id": "contract_sent_no_next_step",
            "object": "deals",
            "when": "\"Deal Stage\" = 'Contract Sent' AND coalesce(trim(\"Next Step\"), '') = ''",
        },
        {
            "id": "eu_without_vat",
            "object": "companies",
            "when": "\"Country/Region\" IN ('Germany', 'France', 'DE') "
            "AND coalesce(trim(\"VAT Number\"), '') = ''",
        },
        {
            "id": "renewal_closing_unowned",
            "object": "deals",
            "when": "\"Deal Type\" = 'existingbusiness' AND owner IS NULL "
            "AND date_diff('day', as_of, close_date) BETWEEN 0 AND 30",
        },
        {
            "id": "phone_not_e164",
            "object": "contacts",
            "when": '"Phone Number" IS NOT NULL '
            "AND NOT regexp_full_match(\"Phone Number\", '\\+[1-9][0-9]{6,14}')",
        },
        {"id": "big_deal_unowned", "object": "deals", "when": "amount > 100000 AND owner IS NULL"},
    ) == {
        "contract_sent_no_next_step": ["5001"],
        "eu_without_vat": ["9002", "9004"],
        "renewal_closing_unowned": ["5002", "5003"],
        "phone_not_e164": ["7002"],
        "big_deal_unowned": ["5003"],
    }


def test_a_finding_carries_the_rules_facts_and_the_records_owner_and_money():
    tables = export_tables()
    [rule] = rules(
        {
            "id": "contract_sent_no_next_step",
            "object": "deals",
            "when": "stage_label = 'Contract Sent' AND \"Next Step\" IS NULL",
            "severity": "critical",
            "title": "Contract sent, no next step",
            "fix": "Write the next step",
        }
    )
    [finding], [report] = team_findings(tables, [rule], AS_OF, seconds=10, memory_mb=256)
    assert report == {
        "id": "contract_sent_no_next_step",
        "object": "deals",
        "severity": "critical",
        "status": "ran",
        "count": 1,
        "why": "",
    }
    assert (finding.category, finding.kind, finding.severity) == (
        "team_rules",
        "contract_sent_no_next_step",
        "critical",
    )
    assert finding.title == "Contract sent, no next step: Vertex — cell automation"
    assert finding.suggested_fix == "Write the next step"
    assert finding.owners == ["Ana Ortiz"]
    assert finding.exposure == {"5001": Decimal(410000)}
    assert finding.deal_currencies == {"5001": "EUR"}


def test_owner_from_routes_to_another_property():
    tables = export_tables()
    found, _ = team_findings(
        tables,
        rules({"id": "x1", "object": "deals", "when": "id = '5005'", "owner_from": "Next Step"}),
        AS_OF,
        seconds=10,
        memory_mb=256,
    )
    assert found[0].owners == ["Demo"]


@pytest.mark.parametrize(
    ("when", "why"),
    [
        ("\"Forecast Category\" = 'commit'", 'the batch\'s deals have no "Forecast Category"'),
        # a name holding a quote is said as it is written in SQL, so it reads as one name
        ('"Job"" Title" = \'x\' AND "A, B" IS NULL', 'deals have no "Job"" Title", "A, B"'),
        ('"Deal Type" > 5', "Cannot compare values of type VARCHAR and type INTEGER_LITERAL"),
        ('cast("Deal Type" AS INTEGER) > 1', "Could not convert string"),
        ('cast("Deal Type" AS BOOLEAN)', "Could not convert string 'newbusiness' to BOOL"),
    ],
)
def test_a_rule_the_batch_cannot_answer_could_not_run(when, why):
    tables = export_tables()
    lock(tables.connection, memory_mb=256)
    [rule] = rules({"id": "r1", "object": "deals", "when": when})
    outcome = run_rule(tables, rule, AS_OF, seconds=10)
    assert outcome.status == COULD_NOT_RUN
    assert why in outcome.why
    assert outcome.as_dict()["count"] is None  # never "none found"


def test_an_owner_from_the_batch_lacks_could_not_run():
    tables = export_tables()
    found, report = team_findings(
        tables,
        rules({"id": "x1", "object": "deals", "when": "true", "owner_from": "CSM"}),
        AS_OF,
        seconds=10,
        memory_mb=256,
    )
    assert found == []
    assert report[0]["why"] == 'the batch\'s deals have no "CSM"'


def test_rules_run_on_a_locked_connection():
    tables = export_tables()
    everything = rules({"id": "x1", "object": "deals", "when": "true"})
    team_findings(tables, everything, AS_OF, seconds=10, memory_mb=256)
    import duckdb

    with pytest.raises(duckdb.Error):
        tables.connection.execute("SET enable_external_access = true")
    with pytest.raises(duckdb.Error):
        tables.connection.execute("SELECT * FROM read_csv('/etc/passwd')")


def test_a_slow_rule_is_stopped_and_said_so():
    import duckdb

    from reviews.engine.tables.build import Tables

    connection = duckdb.connect(":memory:")
    connection.execute(
        "CREATE TABLE deals AS SELECT i::VARCHAR AS id, 'deal ' || i AS name, NULL AS owner, "
        "NULL AS record_source, NULL AS record_source_detail, NULL::DECIMAL AS amount, "
        "NULL AS currency FROM range(3000000) t(i)"
    )
    tables = Tables(connection, headers={"deals": {}})
    lock(connection, memory_mb=256)
    [rule] = rules(
        {
            "id": "slow",
            "object": "deals",
            "when": "regexp_matches(concat(name, name, name, name, name, name), '(d|e|a|l| )+9$')",
        }
    )
    outcome = run_rule(tables, rule, AS_OF, seconds=0.05)
    assert outcome.status == COULD_NOT_RUN
    assert outcome.why == "the rule took longer than 0.05 s"


def test_a_5000_digit_number_or_a_broken_pattern_could_not_run():
    tables = export_tables()
    lock(tables.connection, memory_mb=256)
    big, broken, chain = rules(
        {"id": "r1", "object": "deals", "when": f"amount > {'9' * 5000}"},
        {"id": "r2", "object": "deals", "when": "regexp_matches(name, '(')"},
        {"id": "r3", "object": "deals", "when": " AND ".join(["amount > 0"] * 190)},
    )
    assert run_rule(tables, big, AS_OF, seconds=10).status == COULD_NOT_RUN
    assert "missing )" in run_rule(tables, broken, AS_OF, seconds=10).why
    assert len(run_rule(tables, chain, AS_OF, seconds=10).matches) == 4  # deep, generated


def test_rules_past_the_run_s_total_time_could_not_run():
    tables = export_tables()
    found, report = team_findings(
        tables,
        rules(
            {"id": "r1", "object": "deals", "when": "true"},
            {"id": "r2", "object": "deals", "when": "true"},
        ),
        AS_OF,
        seconds=10,
        memory_mb=256,
        total_seconds=0,
    )
    assert found == []
    assert [r["why"] for r in report] == [
        "the run's time for team rules (0 s) was spent before it"
    ] * 2


def test_a_rule_over_a_list_the_export_lacks_could_not_run_and_says_why():
    files = [f for f in export_files() if "deals" not in f.name]  # companies, contacts
    batch = parse_upload(files, as_of=AS_OF_TIME, received_at=AS_OF_TIME)
    assert batch.partial == ["deals"]
    absent = absent_lists(batch.partial, batch.source)
    library = (LIBRARY / "customer_without_won_deal.yaml").read_text()
    checked = rules(
        {"id": "big_deal", "object": "deals", "when": "amount > 1000"},
        {"id": "any_lead", "object": "leads", "when": "email IS NULL"},  # HubSpot: none
        {"id": "many_deals", "object": "contacts", "when": "deals > 2"},
        {"id": "a_contact", "object": "contacts", "when": "email IS NOT NULL"},
    ) + load(library)
    found, report = team_findings(
        build_tables(batch), checked, AS_OF, seconds=10, memory_mb=256, absent=absent
    )
    assert {r["id"]: (r["status"], r["why"]) for r in report} == {
        "big_deal": (COULD_NOT_RUN, "the batch has no deals list (no file of them)"),
        "any_lead": (COULD_NOT_RUN, "the batch has no leads list (no file of them)"),
        "many_deals": (
            COULD_NOT_RUN,
            "the batch has no deals list (no file of them), which `deals` counts",
        ),
        "a_contact": (RAN, ""),
        "customer_without_won_deal": (
            COULD_NOT_RUN,
            "the batch has no deals list (no file of them), which `won_deals` counts",
        ),
    }
    assert {f.kind for f in found} == {"a_contact"}


def test_a_cast_to_a_decimal_of_given_precision_runs():
    assert flagged(
        export_tables(),
        {"id": "big", "object": "deals", "when": "CAST(amount AS DECIMAL(10,2)) > 100000.50"},
    ) == {"big": ["5001", "5003"]}
