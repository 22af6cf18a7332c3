"""The documentation stays inside the repository: every relative link in README.md,
docs/, bench/README.md, CHANGELOG.md and samples/README.md points at a file (and
heading) that exists, nothing cites the old spec outside it, and docs/settings.md names
every setting the code reads. The tables that restate the code's facts (the kinds of
docs/rules.md, the rules' defaults in docs/settings.md, tuning's measures in
docs/history.md, the columns each kind reads in docs/rules.md) are checked cell by cell
against the registry and `Rules.describe()`, and so is every place the docs write the
stale-enrichment default."""

from __future__ import annotations

import re
import subprocess
from datetime import timedelta
from decimal import Decimal

import pytest

from reviews.engine.coverage import columns_of
from reviews.engine.fixes.hubspot_names import property_name
from reviews.engine.rules import Rules
from reviews.engine.specialists import KINDS, NAMES, REGISTRY, freshness
from reviews.engine.specialists.spec import Kind, needs_of
from tests.services import ROOT

DOCUMENTS = [
    ROOT / "README.md",
    ROOT / "CHANGELOG.md",
    ROOT / "bench" / "README.md",
    ROOT / "samples" / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def anchors(path) -> set[str]:
    """GitHub's heading anchors: lower-cased, punctuation dropped, spaces to hyphens."""
    found = set()
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", title)))
    return found


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_inside_the_repository(document):
    for target in LINK.findall(document.read_text()):
        if re.match(r"[a-z]+:", target):
            continue  # an external URL
        path, _, anchor = target.partition("#")
        resolved = (document.parent / path).resolve() if path else document
        assert resolved.is_relative_to(ROOT), f"{document.name}: {target} leaves the repository"
        assert resolved.exists(), f"{document.name}: {target} does not exist"
        if anchor:
            assert anchor in anchors(resolved), f"{document.name}: no heading #{anchor}"


def test_the_front_page_stays_short_and_links_every_document():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 300
    linked = {(ROOT / target.partition("#")[0]).resolve() for target in LINK.findall(readme)}
    for document in DOCUMENTS[1:]:
        if document.parent.name == "docs" or document.name == "CHANGELOG.md":
            assert document.resolve() in linked, f"README.md does not link {document.name}"
    assert (ROOT / "bench" / "README.md").resolve() in linked


def test_every_setting_the_code_reads_is_in_the_settings_table():
    code = (ROOT / "revreview" / "settings.py").read_text()
    read = set(re.findall(r'env\w*\(\s*"([A-Z][A-Z0-9_]+)"', code))
    table = (ROOT / "docs" / "settings.md").read_text()
    headers = [line for line in table.splitlines() if line.startswith("| setting")]
    assert headers and set(headers) == {"| setting | default | meaning |"}
    named = {
        name
        for line in table.splitlines()
        if line.startswith("| `")
        for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", line.split(" | ")[0])
    }
    assert len(read) > 50
    assert sorted(read - named) == []


def test_the_docs_cover_input_rules_and_output():
    rules = (ROOT / "docs" / "rules.md").read_text()
    for setting in ("RULE_STALE_ENRICHMENT_DAYS", "RULE_DEAL_AMOUNT_TOLERANCE_PCT"):
        assert setting in rules
    for kind in ("deal_entered_twice", "contact_wrong_company", "won_without_amount"):
        assert f"`{kind}`" in rules
    assert "request_changes" in rules
    assert '"ledger"' in (ROOT / "docs" / "output.md").read_text()
    assert "exportedAt" in (ROOT / "docs" / "input.md").read_text()


def test_nothing_cites_the_spec_outside_the_repository():
    tracked = subprocess.run(
        ["git", "ls-files", "*.py", "*.md", "*.html", "Makefile"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    offenders = [
        name
        for name in tracked
        if name != "tests/test_docs.py"
        and re.search(r"spec §|spec section|\.\./shared", (ROOT / name).read_text(errors="replace"))
    ]
    assert offenders == []


# --- the tables that restate the code, cell by cell -----------------------------------------


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split(" | ")]


def table(path, header: str, *, under: str = "") -> list[str]:
    """The rows of the first table whose header line is `header` (after the heading
    `under`, if given), as written."""
    lines = [line.strip() for line in path.read_text().splitlines()]
    start = lines.index(header, lines.index(under) if under else 0)
    rows = []
    for line in lines[start + 2 :]:  # past the header and its |---| line
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def written(value: int | Decimal | str) -> str:
    """A default as the docs write it: a Decimal without trailing zeros."""
    return format(value.normalize(), "f") if isinstance(value, Decimal) else str(value)


RULES_DOC = ROOT / "docs" / "rules.md"
KINDS_HEADER = "| category | kind | finds | severity | setting |"
RULES_HEADER = "| field | setting | default | meaning |"
SETTINGS_DOC = ROOT / "docs" / "settings.md"
SETTINGS_UNDER = "## Rules and the risk tier"
SETTINGS_HEADER = "| setting | default | meaning |"


def kind_cells(category: str, kind: Kind) -> list[str]:
    """docs/rules.md's row of a kind, from its declaration and the rules' defaults."""
    defaults = Rules().as_dict()
    settings = ", ".join(f"`{Rules.setting_of(r)}` ({written(defaults[r])})" for r in kind.rules)
    severities = " / ".join(s.value for s in kind.severities)
    return [category, f"`{kind.name}`", kind.finds, severities, settings]


def test_the_rules_table_is_the_registry_cell_by_cell():
    """Every row of docs/rules.md's kinds table, in order: category, kind, what it finds
    (the kind's `finds`), severities and the settings it reads with their defaults. A kind
    every owner of a field declares (invalid_value) is one "(owner's)" row, last."""
    shared = [k for k in REGISTRY[NAMES[0]].kinds if all(k in REGISTRY[n].kinds for n in NAMES)]
    expected = [
        kind_cells(category, kind)
        for category in NAMES
        for kind in REGISTRY[category].kinds
        if kind not in shared
    ] + [kind_cells("(owner's)", kind) for kind in shared]
    rows = [cells(line) for line in table(RULES_DOC, KINDS_HEADER)]
    assert [row[1] for row in rows] == [row[1] for row in expected]  # every kind, in order
    columns = cells(KINDS_HEADER)
    for row, want in zip(rows, expected, strict=True):
        for column, cell, value in zip(columns, row, want, strict=True):
            assert cell == value, f"docs/rules.md, {want[1]}, {column}: {cell!r} != {value!r}"


def test_the_rules_as_data_table_is_rules_describe_cell_by_cell():
    rows = [cells(line) for line in table(RULES_DOC, RULES_HEADER)]
    expected = [
        [f"`{info.name}`", f"`{info.setting}`", written(info.default), info.meaning]
        for info in Rules.describe()
    ]
    assert rows == expected


def test_the_settings_table_gives_every_rules_default():
    """docs/settings.md's rules section: each Rules setting in one row, with its default
    (a pair of settings shares a row: `8` / `20`); a kind its meaning names reads it."""
    described = {info.setting: info for info in Rules.describe()}
    kinds = {kind.name: kind for spec in REGISTRY.values() for kind in spec.kinds}
    seen = []
    for line in table(SETTINGS_DOC, SETTINGS_HEADER, under=SETTINGS_UNDER):
        names_cell, default_cell, meaning = cells(line)
        names = re.findall(r"`([A-Z][A-Z0-9_]+)`", names_cell)
        if not set(names) <= set(described):
            assert not set(names) & set(described), line  # no Rules setting beside another
            continue
        defaults = re.findall(r"`([^`]*)`", default_cell)
        assert defaults == [written(described[n].default) for n in names], line
        assert default_cell == " / ".join(f"`{d}`" for d in defaults), line
        for name in re.findall(r"`([a-z_]+)`", meaning):
            if name in kinds:
                assert {described[n].name for n in names} & set(kinds[name].rules), line
        seen += names
    assert sorted(seen) == sorted(described)


def test_the_tuning_measures_table_is_the_kinds_measures():
    """docs/history.md: each kind tuning can propose a threshold for, its rule and the
    function measuring it, as the kind declares them."""
    measured = {
        kind.name: kind.measure
        for spec in REGISTRY.values()
        for kind in spec.kinds
        if kind.measure is not None
    }
    header = "| kind | rule | measured value (function) |"
    rows = [cells(line) for line in table(ROOT / "docs" / "history.md", header)]
    assert sorted(row[0] for row in rows) == sorted(f"`{name}`" for name in measured)
    for kind, rule, what in rows:
        measure = measured[kind.strip("`")]
        function = measure.values
        assert rule == f"`{measure.rule}`", kind
        assert what.endswith(f"(`{function.__module__.rpartition('.')[2]}.{function.__name__}`)")


def test_the_to_do_list_table_is_where_each_kind_says_its_fix_is():
    """docs/output.md: every kind the fix plan makes a task of (not a duplicate, which it
    merges) with the record and the HubSpot property its `fix` names; a kind whose fix is
    settled per finding has a row saying how. The duplicates a person checks first are
    the kinds whose merge has a `check`."""
    output = ROOT / "docs" / "output.md"
    listed: dict[str, tuple[str, str]] = {}
    for line in table(output, "| finding | the task is on | property |"):
        names, on, prop = cells(line)
        listed |= {name: (on, prop) for name in re.findall(r"`([a-z_]+)`", names)}
    assert sorted(listed) == sorted(name for name, kind in KINDS.items() if kind.merge is None)
    one = {"companies": "company", "contacts": "contact", "deals": "deal", "leads": "lead"}
    for name, (on, prop) in listed.items():
        fix = KINDS[name].fix
        if fix.object is None:
            continue  # the record and the field are read from each finding: the row says how
        assert on == f"the {one[fix.object]}", name
        if fix.field:
            assert prop == f"`{property_name(fix.object, fix.field)}`", name
        else:
            assert prop.startswith("empty: "), name
    (check,) = [line for line in output.read_text().split("\n\n") if "- `check`:" in line]
    checked = {k.name for k in KINDS.values() if k.merge is not None and k.merge.check}
    assert set(re.findall(r"`([a-z_]+)`", check)) - {"check"} == checked


def test_the_missing_columns_table_is_what_the_kinds_read():
    """docs/rules.md, Partial exports: one row per field (or fields, any one of which
    will do) some kind reads, in the order the registry first names it, with the export
    headers that fill it and every kind it switches off (their `reads=`)."""
    needs: dict[tuple[str, ...], list[str]] = {}
    for kind in KINDS.values():
        for need in kind.reads:
            needs.setdefault(needs_of(need), []).append(kind.name)
    expected = []
    for fields, kinds in needs.items():
        listed = fields[0].partition(".")[0]
        names = [name.partition(".")[2] for name in fields]
        headers = [h for name in names for h in columns_of(listed, name)[0]]
        expected.append(
            [
                listed,
                " or ".join(f"`{name}`" for name in names),
                " or ".join(headers),
                ", ".join(f"`{kind}`" for kind in kinds),
            ]
        )
    header = (
        "| list | field (any one will do) | the export's columns | rules off when none is there |"
    )
    assert [cells(line) for line in table(RULES_DOC, header)] == expected


# The sentences that write the stale-enrichment default, made from it: {days} and the day
# after ({next}). A table row writing it is checked by the tests above.
STALE_SENTENCES = {
    "docs/rules.md": [
        "With the default of {days}, a company enriched {days} days before the as-of date "
        "is fresh, {next} days stale."
    ],
    "docs/input.md": ['"enriched over {days} days ago"'],
    "README.md": ["enrichment older than {days} days"],
}


def test_every_place_the_docs_write_the_stale_enrichment_default_is_checked():
    """Each sentence is made from the default; the rows of the checked tables are left
    out; then no other mention of the number may remain in README.md or docs/."""
    days = Rules().stale_enrichment_days
    tables = [
        (RULES_DOC, KINDS_HEADER, ""),
        (RULES_DOC, RULES_HEADER, ""),
        (SETTINGS_DOC, SETTINGS_HEADER, SETTINGS_UNDER),
    ]
    for document in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = document.read_text()
        for path, header, under in tables:
            if path == document:
                for row in table(path, header, under=under):
                    text = text.replace(row, "")
        text = " ".join(text.split())  # a sentence may be wrapped over lines
        for sentence in STALE_SENTENCES.get(str(document.relative_to(ROOT)), []):
            sentence = sentence.format(days=days, next=days + 1)
            assert sentence in text, f"{document.name}: {sentence!r}"
            text = text.replace(sentence, "")
        assert not re.search(rf"\b{days}\b", text), f"{document.name} writes {days} unchecked"


def test_the_default_stale_threshold_sentence_is_what_the_detector_does():
    """docs/rules.md: with the default, a company enriched that many days before the
    as-of date is fresh, one day more is stale."""
    from tests.engine.specialists.factories import AS_OF, company, make_batch

    days = Rules().stale_enrichment_days
    companies = [
        company(f"co_{age}", enriched_at=AS_OF - timedelta(days=age)) for age in (days, days + 1)
    ]
    found = freshness.detect(make_batch(companies), Rules())
    assert [(f.kind, f.record_ids) for f in found] == [("stale_enrichment", [f"co_{days + 1}"])]
