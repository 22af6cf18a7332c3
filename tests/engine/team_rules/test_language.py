"""The `when` language: what is allowed, what is refused (and where), and the SQL made
from the checked tree."""

from __future__ import annotations

import datetime as dt
import json

import pytest
import sqlglot

from reviews.engine.team_rules import language
from reviews.engine.team_rules.language import FUNCTIONS, column_names, parse, resolve, to_sql
from reviews.engine.team_rules.rulefile import RuleFileError, load

BASE_RULE = {"id": "not_a_condition", "object": "deals", "severity": "warning", "title": "t",
             "fix": "f"}  # fmt: skip


def when_sql(when: str) -> str:
    return sqlglot.parse_one(when, read="duckdb").sql("duckdb")


def refusals(when: str) -> list[str]:
    tree, problems = parse(when)
    assert (tree is None) == bool(problems)
    return [p.text(when) for p in problems]


@pytest.mark.parametrize(
    "when",
    [
        "\"Deal Stage\" = 'Contract Sent' AND coalesce(trim(\"Next Step\"), '') = ''",
        "amount > 100000 AND owner IS NULL",
        "date_diff('day', as_of, close_date) BETWEEN 0 AND 30",
        "NOT (lower(email) LIKE '%@%') OR email ILIKE '%.invalid'",
        "stage IN ('a', 'b') AND stage NOT IN ('c')",
        "CASE WHEN amount > 10 THEN true ELSE false END",
        "abs(round(amount, 2) - 1) * 2 / 3 % 4 >= -1",
        'try_cast("Employees" AS INTEGER) > 500',
        "close_date::DATE < as_of - INTERVAL 30 DAY",
        "len(contact_ids) = 0 AND x IS DISTINCT FROM y || 'z'",
        "regexp_matches(phone, '^\\+') AND contains(a, 'b') AND starts_with(a, 'b') "
        "AND ends_with(a, 'b') AND replace(a, 'b', 'c') = nullif(upper(a), '')",
    ],
)
def test_allowed_expressions_parse(when):
    assert refusals(when) == []


@pytest.mark.parametrize(
    ("when", "expected"),
    [
        ("getenv('HOME') = 'x'", "line 1, column 1: function getenv() is not allowed"),
        (
            "amount > 1 AND current_setting('threads') = 1",
            "line 1, column 16: function current_setting() is not allowed",
        ),
        ("read_csv('/etc/passwd') IS NULL", "line 1, column 1: function read_csv() is not allowed"),
        ("read_text('/etc/passwd') = ''", "line 1, column 1: function read_text() is not allowed"),
        (
            "amount IN (SELECT amount FROM deals)",
            "line 1, column 1: IN takes a list of values, not a query",
        ),
        ("(SELECT 1) = 1", "a subquery is not allowed"),
        ("amount = 1; amount = 2", "one expression only, not 2 statements"),
        ("SET threads = 8", "is not allowed in a rule"),
        ("PRAGMA version", "is not allowed in a rule"),
        ("amount = = 1", "line 1, column 10: syntax error"),
        ("deals.amount = 1", "line 1, column 1: deals.amount: name a column of the record alone"),
        ("cast(amount AS BLOB) IS NULL", "type BLOB is not allowed"),
        ("now() > close_date", "function now() is not allowed"),
        ("amount = ?", "`?` is not allowed"),
        ("", "`when` must be a non-empty expression"),
        ("a = 'x\x00'", "holds a NUL byte"),
    ],
)
def test_refused_expressions_say_what_and_where(when, expected):
    found = refusals(when)
    assert found, when
    assert expected in found[0]


def test_every_refusal_is_listed_once():
    found = refusals("getenv('a') = 1 AND (SELECT 1) = 1 AND read_csv('x') IS NULL")
    assert len(found) == 3
    assert [f.split(": ", 1)[0] for f in found] == [
        "line 1, column 1",
        "line 1, column 29",  # the subquery's first token sqlglot places
        "line 1, column 40",
    ]


def test_every_published_function_is_allowed_and_nothing_else():
    for name, (call, _what) in FUNCTIONS.items():
        assert refusals(f"({call}) IS NULL") == [], name
    for name in ("getenv", "current_setting", "read_csv_auto", "glob", "strlen_x", "now"):
        assert refusals(f"{name}('x') IS NULL"), name


def test_the_sql_is_generated_from_the_tree_with_every_name_quoted():
    tree, _ = parse(
        "\"Next Step\" = 'x' AND Amount > 1 AND date_diff('day', as_of, close_date) > 3"
    )  # noqa: E501
    names = column_names(tree)
    found, missing = resolve(names, ["amount", "close_date", "Next Step"], {})
    assert missing == []
    sql = to_sql(tree, found, dt.date(2026, 8, 1))
    assert "\"Next Step\" = 'x'" in sql
    assert '"amount" > 1' in sql
    assert "DATE_DIFF('DAY', CAST('2026-08-01' AS DATE), \"close_date\") > 3" in sql


def test_a_name_with_a_quote_stays_one_identifier():
    tree, _ = parse('"a""; DROP TABLE deals; --" IS NULL')
    found, _ = resolve(column_names(tree), ['a"; DROP TABLE deals; --'], {})
    assert to_sql(tree, found, dt.date(2026, 1, 1)) == '"a""; DROP TABLE deals; --" IS NULL'


def test_names_resolve_through_aliases_and_case():
    found, missing = resolve(
        ["Deal Stage", "AMOUNT", "Forecast"], ["stage", "amount"], {"Deal Stage": "stage"}
    )
    assert found == {"Deal Stage": "stage", "AMOUNT": "amount"}
    assert missing == ["Forecast"]


def test_as_of_is_a_date():
    tree, _ = parse("as_of = DATE '2026-08-01'")
    assert language.to_sql(tree, {}, dt.date(2026, 8, 1)).startswith("CAST('2026-08-01' AS DATE)")


@pytest.mark.parametrize("when", ["amount", "1", "'yes'", "name", "amount + 1", "NULL",
                                  "CASE WHEN amount > 1 THEN 1 END", "lower(name)"])  # fmt: skip
def test_a_when_that_is_not_a_condition_is_refused_naming_the_rule(when):
    text = json.dumps({"rules": [{**BASE_RULE, "when": when}]})
    with pytest.raises(RuleFileError) as refused:
        load(text)
    assert refused.value.problems == [
        f"rule not_a_condition: when: line 1, column 1: `{when_sql(when)}` is not a "
        "condition: write a comparison, AND/OR/NOT, IS, IN, BETWEEN, LIKE or a function "
        "that answers true or false"
    ]


@pytest.mark.parametrize("when", ["is_won", "NOT is_closed", "true", "(amount > 1)",
                                  "coalesce(amount > 1, false)", "contains(name, 'a')",
                                  "CASE WHEN amount > 1 THEN true ELSE NULL END",
                                  "try_cast(name AS BOOLEAN)", "name IS NULL"])  # fmt: skip
def test_conditions_of_every_shape_are_taken(when):
    assert load(json.dumps({"rules": [{**BASE_RULE, "when": when}]}))[0].when == when


def test_decimal_takes_its_precision_and_scale():
    assert refusals("CAST(amount AS DECIMAL(10,2)) > 1000.5") == []
    assert refusals('try_cast("Seats" AS DECIMAL(4)) > 2') == []
    assert refusals("CAST(amount AS DECIMAL(99,2)) > 1") == [
        "line 1, column 24: type DECIMAL(99, 2): precision 1 to 38, scale 0 to the precision"
    ]
    assert refusals("CAST(amount AS INT(5)) > 1") == [
        "line 1, column 20: type INT(5): only DECIMAL takes (precision, scale)"
    ]


@pytest.mark.parametrize(
    ("when", "expected"),
    [
        ("amount >", "line 1, column 8: syntax error: something is missing after `>`"),
        ("amount > 1\n  AND AND x", "line 2, column 9: syntax error: something is missing "
         "after `AND`"),
        ("amount = 'abc", "line 1, column 10: syntax error: a text is opened here and never "
         "closed"),
        ('"Next Step = 1', "line 1, column 1: syntax error: a quoted name is opened here and "
         "never closed"),
        ("amount > ?", "line 1, column 10: `?` is not allowed in a rule"),
        ("close_date < current_date", "line 1, column 14: function current_date() is not "
         "allowed (docs/rules.md lists those that are)"),
        ("CAST(amount AS BLOB) > 1", "line 1, column 16: type BLOB is not allowed; use one of "
         "BIGINT, BOOLEAN, DATE, DECIMAL, DOUBLE, INT, TEXT, TIMESTAMP, VARCHAR"),
        ("amount > 1; amount < 2", "line 1, column 11: one expression only, not 2 statements"),
    ],
)  # fmt: skip
def test_problems_are_said_in_words_with_line_and_column(when, expected):
    assert refusals(when) == [expected]
