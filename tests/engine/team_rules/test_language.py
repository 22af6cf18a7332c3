"""The `when` language: what is allowed, what is refused (and where), and the SQL made
from the checked tree."""

from __future__ import annotations

import datetime as dt
import json

import pytest
import sqlglot

from reviews.engine.team_rules import growth, language
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


def nested_replace(levels: int, new: str = "aaaaaaaaaa") -> str:
    inner = "name"
    for _ in range(levels):
        inner = f"replace({inner}, 'a', '{new}')"
    return f"length({inner}) > 0"


@pytest.mark.parametrize(
    ("when", "expected"),
    [
        # QA's bomb (qa-files/replace_bomb.yaml): 10^12 times the name, refused unrun
        # the innermost replace() past the bound: the 2nd of 12 (at column 88)
        (nested_replace(12), "line 1, column 88: replace() builds a text up to 100 times"),
        (nested_replace(2), "line 1, column 8: replace() builds a text up to 100 times"),
        (nested_replace(1, "a" * 17), "line 1, column 8: replace() builds a text up to 17 "),
        ("concat(" + ", ".join(["name"] * 17) + ") = ''", "line 1, column 1: concat() builds"),
        ("name" + " || name" * 16 + " = ''", "line 1, column 1: || builds a text up to 17 "),
        (
            "concat(concat(name, name, name, name), concat(name, name, name, name), "
            "concat(name, name, name, name), concat(name, name, name, name), name) = ''",
            "line 1, column 1: concat() builds a text up to 17 times",
        ),
        ("replace(name, 'a', name) = ''", "line 1, column 20: replace()'s new text must be"),
        ("replace(name, 'a', lower('b')) = ''", "line 1, column 20: replace()'s new text"),
        ("replace(name, 'a') = ''", "line 1, column 1: replace()'s new text must be"),
        (
            "replace(concat(name, name), 'a', 'aaaaaaaaa') = ''",
            "line 1, column 1: replace() builds a text up to 18 times",
        ),
        ("replace(name, lower(x), 'aaaaaaaaaaaaaaaaa') = ''", "up to 17 times"),
        # the bound follows a text through functions that keep or shorten it
        ("replace(lower(concat(name, name, name, name, name)), 'a', 'aaaa') = ''", "20 times"),
    ],
)
def test_a_rule_that_can_grow_a_text_past_the_bound_is_refused_unrun(when, expected):
    found = refusals(when)
    assert len(found) == 1, found
    assert expected in found[0]
    assert (
        found[0].endswith(f"a rule may build at most {growth.MAX_GROWTH} times (docs/rules.md)")
        or "must be written out" in found[0]
    )


@pytest.mark.parametrize(
    "when",
    [
        "replace(name, 'a', 'aaaaaaaaaaaaaaaa') = ''",  # 16 times: the bound
        "replace(replace(name, 'ab', 'abab'), 'a', 'aaaa') = ''",  # 2 * 4
        "replace(replace(replace(name, '-', ''), ' ', ''), '.', '') = ''",  # shrinking
        "replace(name, 'abc', 'x') || replace(name, 'a', 'b') = ''",
        "concat(first_name, ' ', last_name) = name",
        "concat(" + ", ".join(["name"] * 16) + ") = ''",
        "replace(name, '', 'aaaaaaaaaaaaaaaaaaaaaaaa') = ''",  # an empty old text: unchanged
        "replace(name, 'a', NULL) IS NULL",
        "coalesce(name, '') || coalesce(domain, '') = 'x'",
    ],
)
def test_a_rule_within_the_growth_bound_is_taken(when):
    assert refusals(when) == []


def test_two_texts_past_the_bound_are_both_said_in_order():
    when = f"concat({', '.join(['name'] * 17)}) = '' OR replace(name, 'a', '{'a' * 17}') = ''"
    assert [f.split(" builds")[0] for f in refusals(when)] == [
        "line 1, column 1: concat()",
        f"line 1, column {when.index('replace') + 1}: replace()",
    ]


def test_the_growth_bound_holds_in_duckdb():
    """What DuckDB makes of a rule at the bound is no longer than MAX_GROWTH times the
    longest value it starts from: the bound is an upper bound on what the functions do."""
    import duckdb

    value = "aaaa-bb"
    for when, longest in [
        ("replace(name, 'a', 'aaaaaaaaaaaaaaaa')", len(value)),
        ("replace(replace(name, 'a', 'aa'), 'b', 'bbbbbbbb')", len(value)),
        ("upper(concat(name, '0123456789', name)) || name", 10),
        ("replace(name, '-', '0123456789abcdef')", 16),
        ("concat(" + ", ".join(["name"] * 16) + ")", len(value)),
    ]:
        assert refusals(f"{when} IS NOT NULL") == [], when
        query = f"SELECT {when} FROM (SELECT '{value}' AS name)"  # noqa: S608
        made = duckdb.connect().execute(query).fetchone()[0]
        assert len(value) < len(made) <= growth.MAX_GROWTH * longest, when
