"""docs/rules.md's tables of the team rules' language, helper columns and library are
the code's, cell by cell: the function list is published once (language.FUNCTIONS)."""

from __future__ import annotations

from pathlib import Path

from reviews.engine.team_rules.language import FUNCTIONS
from reviews.engine.team_rules.rulefile import load
from reviews.engine.team_rules.run import HELPERS

ROOT = Path(__file__).resolve().parents[3]
SECTION = (ROOT / "docs" / "rules.md").read_text().split("## A team's own rules", 1)[1]


def table(header: str) -> list[list[str]]:
    """The rows of the section's table whose header row starts with `header`."""
    lines = SECTION.split(f"| {header} |", 1)[1].split("\n")[2:]
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_the_function_table_is_the_published_list():
    assert table("function") == [[f"`{n}`", f"`{c}`", w] for n, (c, w) in FUNCTIONS.items()]


def test_the_helper_table_is_the_helpers():
    assert table("object") == [
        [name, f"`{column}`", what]
        for name, helpers in HELPERS.items()
        for column, what in helpers.items()
    ]


def test_the_library_table_lists_every_rule_of_every_file():
    library = ROOT / "reviews" / "engine" / "team_rules" / "library"
    assert table("file") == [
        [f"`{path.name}`", f"`{rule.id}`", rule.object, rule.severity, rule.title]
        for path in sorted(library.glob("*.yaml"))
        for rule in load(path.read_bytes())
    ]


def test_the_examples_load():
    examples = SECTION.split("### Examples", 1)[1].split("```yaml", 1)[1].split("```", 1)[0]
    assert [rule.id for rule in load(examples)] == [
        "eu_company_without_vat",
        "big_deal_without_owner",
        "renewal_closing_unowned",
    ]
    first = SECTION.split("### A rule file", 1)[1].split("```yaml", 1)[1].split("```", 1)[0]
    assert [rule.owner_from for rule in load(first)] == ["Deal owner"]


def test_the_growth_limit_is_the_codes():
    from reviews.engine.team_rules.growth import MAX_GROWTH

    assert f"**A text may grow at most {MAX_GROWTH} times**" in SECTION
