"""The rule editor's form (property, operator, value) as a condition: run over the tables
of a HubSpot CSV export, it flags what the form says; a number is compared as a number,
whether the column is typed (amount, a decimal) or text holding one."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from reviews.engine.team_rules.builder import condition
from reviews.engine.team_rules.rulefile import load
from reviews.engine.team_rules.run import RAN, team_findings
from tests.engine.team_rules.exports import DEALS, export_tables

AS_OF = dt.date(2026, 8, 1)
# The export's deals with a text property holding numbers, written several ways.
SEATS = ["12", "12.0", "", "abc", "7"]
DEALS_WITH_SEATS = [DEALS[0] + ["Seats"]] + [
    row + [s] for row, s in zip(DEALS[1:], SEATS, strict=True)
]


def flagged(*rows: tuple[str, str, str]) -> list[str]:
    rule = {"id": "form_rule", "object": "deals", "when": condition(rows), "severity": "warning"}
    rules = load(json.dumps({"rules": [{**rule, "title": "t", "fix": "f"}]}))
    findings, report = team_findings(
        export_tables(deals=DEALS_WITH_SEATS), rules, AS_OF, seconds=10, memory_mb=256
    )
    assert [r["status"] for r in report] == [RAN], report
    return sorted(i for f in findings for i in f.record_ids)


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ([("Amount", "equals", "410000")], ["5001"]),  # a decimal: 410000.000000
        ([("amount", "equals", "410000.00")], ["5001"]),
        ([("Amount", "not_equals", "410000")], ["5002", "5003", "5004", "5005"]),
        ([("Seats", "equals", "12")], ["5001", "5002"]),  # text: "12" and "12.0"
        ([("Seats", "not_equals", "12")], ["5003", "5004", "5005"]),
        ([("Deal Type", "equals", "newbusiness")], ["5001", "5004"]),  # text is text
        ([("Deal Type", "not_equals", "newbusiness")], ["5002", "5003", "5005"]),
    ],
)
def test_the_form_compares_numbers_as_numbers_and_text_as_text(rows, expected):
    assert flagged(*rows) == expected
