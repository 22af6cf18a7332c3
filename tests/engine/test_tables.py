"""The batch as tables (reviews/engine/tables/): typed documented columns, every other
property kept under its own name, headers as aliases, Parquet that reads back the same,
fill rates, and the lock a team's rule runs under."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal

import duckdb
import pytest

from reviews.engine.findings import RawFinding
from reviews.engine.history.breakdown import tally_stages
from reviews.engine.tables.build import build_tables, typed_columns
from reviews.engine.tables.profile import NO_STAGE, deal_stages, fill_rates
from reviews.engine.tables.sandbox import RuleTimeout, deadline, lock
from reviews.engine.tables.store import read_parquet, write_parquet
from tests.engine.ingest.helpers import batch_doc, parse_files, parse_json

DEALS_CSV = (
    "Record ID,Deal Name,Amount,Deal Stage,Close Date,Pipeline,Next Step,Deal Type,VAT Number\n"
    "501,Acme renewal,41000,Contract Sent,2026-09-30,Sales Pipeline,,Renewal,DE123\n"
    '502,Globex new,"1,200.50",Closed Won,2026-06-30,Sales Pipeline,Send MSA,New Business,\n'
    "503,Initech,,Someday,,Sales Pipeline,,,\n"
)
CONTACTS_CSV = (
    "Record ID,First Name,Last Name,Email,Phone Number,Associated Company IDs\n"
    "701,Ana,Ruiz,ana@acme.example,+1 415 555 0134,901;902\n"
    "702,Tom,Baker,tom@globex.example,,\n"
)


@pytest.fixture
def export():
    return build_tables(parse_files(("deals.csv", DEALS_CSV), ("contacts.csv", CONTACTS_CSV)))


def rows(tables, sql: str) -> list[tuple]:
    return tables.connection.execute(sql).fetchall()


def test_documented_fields_are_typed_and_every_other_column_is_kept(export):
    columns = export.columns("deals")
    assert columns[: len(typed_columns("deals"))] == list(typed_columns("deals"))
    assert columns[len(typed_columns("deals")) :] == ["Next Step", "Deal Type", "VAT Number"]
    assert rows(export, "SELECT id, amount, close_date FROM deals ORDER BY id") == [
        ("501", Decimal("41000"), date(2026, 9, 30)),
        ("502", Decimal("1200.50"), date(2026, 6, 30)),
        ("503", None, None),
    ]
    assert rows(export, 'SELECT "Deal Type", "VAT Number" FROM deals ORDER BY id') == [
        ("Renewal", "DE123"), ("New Business", None), (None, None),
    ]  # fmt: skip
    assert rows(export, "SELECT company_ids FROM contacts ORDER BY id") == [
        (["901", "902"],),
        ([],),
    ]


def test_deals_carry_their_stage_state_as_the_rules_resolve_it(export):
    assert rows(
        export, "SELECT id, stage_id, stage_label, is_closed, is_won FROM deals ORDER BY id"
    ) == [
        ("501", "contractsent", "Contract Sent", False, False),
        ("502", "closedwon", "Closed Won", True, True),
        ("503", None, None, None, None),  # a stage no pipeline knows
    ]
    assert deal_stages(export) == {"501": "Contract Sent", "502": "Closed Won", "503": "Someday"}


def test_a_header_that_filled_a_field_names_its_column(export):
    aliases = export.aliases["deals"]
    assert aliases["Deal Stage"] == "stage" and aliases["Close Date"] == "close_date"
    assert "Amount" not in aliases  # "amount" already: DuckDB folds case
    # The JSON batch's names (docs/input.md) name the typed columns too.
    assert aliases["closeDate"] == "close_date" and aliases["companyId"] == "company_id"
    assert export.labels("contacts")["email"] == "Email"
    assert export.labels("contacts")["owner"] == "owner"  # no column: the JSON name


def test_json_properties_of_any_shape_are_kept_as_text():
    doc = batch_doc(
        companies=[
            {"id": "c1", "name": "Acme", "employees": 120, "public": True,
             "tags": ["b2b", "eu"], "address": {"city": "Köln"}, "note": "a\x00b\ud800",
             "huge": "9" * 5000, "Name ": "clash?", "NAME": "folds onto name"},
        ]
    )  # fmt: skip
    tables = build_tables(parse_json(doc))
    row = dict(
        zip(tables.columns("companies"), rows(tables, "SELECT * FROM companies")[0], strict=True)
    )
    assert row["employees"] == "120" and row["public"] == "true"
    assert row["tags"] == '["b2b","eu"]' and row["address"] == '{"city":"Köln"}'
    assert row["note"] == "a\\u0000b\\ud800"  # NUL and a lone surrogate kept visible
    assert row["huge"] == "9" * 5000
    assert row["Name "] == "clash?"  # a different name, trailing space and all
    assert tables.left_out["companies"] == ["NAME"]


def test_an_empty_list_is_an_empty_table_with_its_columns():
    tables = build_tables(parse_json(batch_doc(companies=[{"id": "c1", "name": "Acme"}])))
    assert rows(tables, "SELECT count(*) FROM deals") == [(0,)]
    assert tables.columns("deals") == list(typed_columns("deals"))


def test_parquet_reads_back_the_same_tables(export, tmp_path):
    write_parquet(export, tmp_path / "batch")
    for load in (True, False):
        again = read_parquet(tmp_path / "batch", load=load)
        for name in ("companies", "contacts", "deals"):
            assert again.columns(name) == export.columns(name)
            sql = f"SELECT * FROM {name} ORDER BY id"
            assert rows(again, sql) == rows(export, sql)
        assert again.aliases == export.aliases
    assert read_parquet(tmp_path / "nothing") is None


def test_a_second_writer_leaves_the_first_ones_tables(export, tmp_path):
    write_parquet(export, tmp_path / "batch")
    other = build_tables(parse_json(batch_doc(companies=[{"id": "c9", "name": "Other"}])))
    write_parquet(other, tmp_path / "batch")
    assert rows(read_parquet(tmp_path / "batch"), "SELECT count(*) FROM deals") == [(3,)]
    assert [p.name for p in tmp_path.iterdir()] == ["batch"]  # no temporary folder left


def test_fill_rates_count_blank_text_and_empty_lists_as_empty(export):
    found = {row["label"]: row for row in fill_rates(export)["contacts"]}
    assert found["Phone Number"] == {
        "name": "Phone Number", "label": "Phone Number", "filled": 1, "total": 2,
    }  # fmt: skip
    assert found["Associated Company IDs"]["filled"] == 1
    assert found["Email"]["filled"] == 2
    deals = [row["name"] for row in fill_rates(export)["deals"]]
    assert "stage_id" not in deals and "is_won" not in deals  # derived, not exported


def test_open_problems_count_under_each_stage_of_their_deals():
    def finding(severity: str, *ids: str) -> RawFinding:
        return RawFinding("pipeline", "k", severity, "t", "d", list(ids))

    stages = {"d1": "Contract Sent", "d2": "Closed Won", "d3": NO_STAGE}
    counted = tally_stages(
        [finding("critical", "d1", "d2"), finding("warning", "d1"), finding("warning", "c1")],
        stages,
    )
    assert counted == [
        {"name": "Contract Sent", "critical": 1, "warning": 1, "total": 2},
        {"name": "Closed Won", "critical": 1, "warning": 0, "total": 1},
    ]


def test_a_locked_database_reads_only_its_tables(export, tmp_path):
    lock(export.connection, memory_mb=256)
    assert rows(export, "SELECT count(*) FROM deals") == [(3,)]
    for sql in (
        "SELECT * FROM read_csv('/etc/passwd')",
        f"COPY deals TO '{tmp_path}/out.csv'",
        "SET enable_external_access = true",
        "SET memory_limit = '8GB'",
        f"ATTACH '{tmp_path}/other.db'",
        "INSTALL httpfs",
    ):
        with pytest.raises(duckdb.Error):
            export.connection.execute(sql)
    assert not list(tmp_path.iterdir())


@pytest.mark.slow
def test_a_query_past_its_deadline_is_interrupted():
    connection = duckdb.connect()
    connection.execute("CREATE TABLE t AS SELECT range AS a FROM range(100000)")
    lock(connection, memory_mb=256)
    with pytest.raises(RuleTimeout), deadline(connection, 0.3):
        connection.execute("SELECT count(*) FROM t x, t y WHERE (x.a * 7 + y.a) % 1000003 = 5")
    assert connection.execute("SELECT count(*) FROM t").fetchone() == (100000,)


def test_a_team_rule_may_name_a_field_as_docs_input_md_does(export):
    from datetime import date as day

    from reviews.engine.team_rules.rulefile import load
    from reviews.engine.team_rules.run import team_findings

    rule = {"id": "late", "object": "deals", "severity": "warning", "title": "t", "fix": "f",
            "when": "closeDate < as_of AND NOT is_closed"}  # fmt: skip
    found, report = team_findings(
        export, load(json.dumps({"rules": [rule]})), day(2026, 10, 1), seconds=10, memory_mb=256
    )
    assert [r["status"] for r in report] == ["ran"]
    assert [f.record_ids for f in found] == [["501"]]


def test_numbers_past_64_bits_are_kept_and_past_python_s_limit_left_empty():
    import sys

    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        huge = int("9" * (limit + 100))
    finally:
        sys.set_int_max_str_digits(limit)
    from reviews.engine.tables.build import property_text

    assert property_text(2**70) == str(2**70)
    assert property_text({"n": [2**64, None]}) == '{"n":[18446744073709551616,null]}'
    assert property_text(huge) is None
