"""Rule files: taken whole or refused whole, every problem listed with its rule id."""

from __future__ import annotations

import json

import pytest

from reviews.engine.rules import Rules
from reviews.engine.team_rules.rulefile import RuleFileError, TeamRule, dump, load

GOOD = {
    "id": "contract_sent_no_next_step",
    "object": "deals",
    "when": "\"Deal Stage\" = 'Contract Sent' AND coalesce(trim(\"Next Step\"), '') = ''",
    "severity": "critical",
    "title": "Contract sent with no next step",
    "fix": "Write the next step on the deal",
}


def problems_of(text: str | bytes) -> list[str]:
    with pytest.raises(RuleFileError) as caught:
        load(text)
    return caught.value.problems


def with_rule(**changes) -> str:
    return json.dumps({"rules": [GOOD, {**GOOD, "id": "second", **changes}]})


def test_json_and_yaml_read_the_same_and_dump_reads_back():
    from_json = load(json.dumps({"rules": [GOOD]}))
    assert from_json == [TeamRule(**GOOD)]
    assert load(dump(from_json)) == from_json
    assert from_json[0].kind.heading(2, Rules()) == "2 deals: Contract sent with no next step"


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"when": "read_csv('/etc/passwd') IS NULL"}, "rule second: when: line 1, column 1: function read_csv() is not allowed"),  # noqa: E501
        ({"when": "amount > 1; amount < 2"}, "rule second: when: line 1, column 11: one expression only, not 2 statements"),  # noqa: E501
        ({"when": "getenv('AWS_SECRET') <> ''"}, "rule second: when: line 1, column 1: function getenv() is not allowed"),  # noqa: E501
        ({"when": "current_setting('memory_limit') = '1GB'"}, "rule second: when: line 1, column 1: function current_setting()"),  # noqa: E501
        ({"when": "SET memory_limit = '100GB'"}, "rule second: when: line 1, column 1: `SET memory_limit = '100GB'` is not allowed"),  # noqa: E501
        ({"when": "amount >"}, "rule second: when: line 1, column 8: syntax error"),
        ({"object": "tickets"}, "rule second: unknown object 'tickets'; one of companies, contacts, deals"),  # noqa: E501
        ({"severity": "blocker"}, "rule second: unknown severity 'blocker'; one of critical, warning, suggestion"),  # noqa: E501
        ({"id": "won_without_amount"}, "rule won_without_amount: id 'won_without_amount' is a built-in kind; choose another"),  # noqa: E501
        ({"id": "Bad Slug!"}, "rule 'Bad Slug!': id must be a slug"),
        ({"id": "contract_sent_no_next_step"}, "rule contract_sent_no_next_step: id 'contract_sent_no_next_step' is used twice"),  # noqa: E501
        ({"colour": "red"}, "rule second: unknown field 'colour'"),
        ({"title": 5}, "rule second: title must be text, not int"),
        ({"fix": "a\x00b"}, "rule second: fix holds a NUL byte or a lone surrogate"),
    ],
)  # fmt: skip
def test_each_bad_rule_is_named_with_its_problem(changes, expected):
    found = problems_of(with_rule(**changes))
    assert any(problem.startswith(expected) for problem in found), found


def test_a_file_lists_every_problem_of_every_rule():
    text = json.dumps(
        {
            "rules": [
                {**GOOD, "id": "a1", "object": "tickets", "severity": "blocker"},
                {**GOOD, "id": "a2", "when": "getenv('x') = 1 AND read_csv('y') IS NULL"},
                {"id": "a3"},
            ]
        }
    )
    found = problems_of(text)
    assert found == [
        "rule a1: unknown object 'tickets'; one of companies, contacts, deals, leads",
        "rule a1: unknown severity 'blocker'; one of critical, warning, suggestion",
        "rule a2: when: line 1, column 1: function getenv() is not allowed (docs/rules.md "
        "lists those that are)",
        "rule a2: when: line 1, column 21: function read_csv() is not allowed (docs/rules.md "
        "lists those that are)",
        "rule a3: object is missing",
        "rule a3: when is missing",
        "rule a3: severity is missing",
        "rule a3: title is missing",
        "rule a3: fix is missing",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("rules: [", "not YAML or JSON at line 1"),
        ("{}", 'the file must hold {"rules": [...]}'),
        ("rules: {}", 'the file must hold {"rules": [...]}'),
        ("a: &x [1]\nrules: *x", "YAML aliases"),
        (b"\xff\xfe rules", "the file is not UTF-8"),
        ("rules: []\nother: 1", "unknown top-level key(s): 'other'"),
        ("rules:\n  - 5", "rule 1: must be a mapping"),
        ("!!python/object:os.system {}", "not YAML or JSON"),
    ],
)
def test_files_that_are_not_rule_files_are_refused(text, expected):
    assert problems_of(text)[0].startswith(expected)


def test_braces_in_a_title_are_text_in_the_heading():
    [rule] = load(json.dumps({"rules": [{**GOOD, "title": "no {next} step"}]}))
    assert rule.kind.heading(1, Rules()) == "1 deal: no {next} step"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("rules: []\x00", "the file holds a NUL byte"),
        ("rules: [{id: r1, when: '\ud800'}]", "the file holds a lone surrogate"),
        ("rules: " + "[" * 5000, "the file is nested more than 20 deep (line 1"),
    ],
)
def test_files_with_what_no_text_holds_are_refused_in_words(text, expected):
    assert problems_of(text)[0].startswith(expected)


def test_an_expression_too_deep_or_too_long_is_refused_in_words():
    deep = "(" * 3000 + "1" + ")" * 3000 + " = 1"
    chain = " AND ".join(["amount = 1"] * 1000)
    for when in (deep, chain):
        [problem] = problems_of(json.dumps({"rules": [{**GOOD, "when": when}]}))
        assert problem.startswith("rule contract_sent_no_next_step: when: ")
        assert "nested more than 200 deep" in problem
    # a long flat list is fine: the library's country list holds 923 values
    values = ", ".join(f"'{n}'" for n in range(2000))
    assert load(json.dumps({"rules": [{**GOOD, "when": f"name IN ({values})"}]}))


@pytest.mark.parametrize(
    "text",
    [
        '{"rules": [' + "[" * 8000 + "]" * 8000 + "]}",  # 16 KB of JSON
        "rules:\n  - " + "[" * 20000 + "]" * 20000 + "\n",  # 40 KB of YAML
        "rules:\n" + "".join(f"{'  ' * i}- \n" for i in range(1, 40)),  # block nesting
    ],
)
def test_a_file_nested_too_deep_is_refused_in_words(text):
    (problem,) = problems_of(text)
    assert problem.startswith("the file is nested more than 20 deep (line ")
