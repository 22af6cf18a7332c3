"""The documentation stays inside the repository: every relative link in README.md,
docs/, bench/README.md, CHANGELOG.md and samples/README.md points at a file (and
heading) that exists, nothing cites the old spec outside it, and docs/settings.md names
every setting the code reads."""

from __future__ import annotations

import re
import subprocess

import pytest

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
