"""`manage.py review --help` says what the documents say: every exit code of
docs/output.md's table, and the as-of time's sources in the README's order."""

from __future__ import annotations

import re

from reviews.management.commands.review import Command
from tests.services import ROOT


def help_text() -> str:
    return " ".join(Command().create_parser("manage.py", "review").format_help().split())


def documented_exit_codes() -> dict[int, str]:
    """docs/output.md's table: code -> the meaning's first words (up to a colon)."""
    text = (ROOT / "docs" / "output.md").read_text()
    section = text.split("## Exit codes of `manage.py review`", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d) \| ([^|]+) \|$", section, re.MULTILINE)
    return {int(code): meaning.split(":")[0].replace("`", "").strip() for code, meaning in rows}


def test_the_help_lists_every_documented_exit_code():
    codes = documented_exit_codes()
    assert set(codes) == {0, 1, 2, 3}
    shown = help_text().split("exit codes:", 1)[1]
    listed = re.findall(r"(?:^| )(\d) ", shown)
    assert [int(c) for c in listed] == sorted(codes)
    for code, meaning in codes.items():
        # "approve or approve_with_comments", "request_changes", "bad input", "no verdict"
        assert f"{code} {meaning}" in shown, (code, meaning, shown)


def test_the_help_names_the_as_of_sources_the_readme_names_in_its_order():
    readme = " ".join((ROOT / "README.md").read_text().split())
    sentence = readme.split("`--as-of` sets the time every date rule counts from", 1)[1]
    sentence = sentence.split(")", 1)[0]
    text = help_text()
    as_of = text.rsplit("--as-of AS_OF", 1)[1].split("--worker", 1)[0]  # not the usage line
    sources = ("exportedAt", "CSV, XLSX or CRM API export", "Last Modified Date", "upload time")
    for words in (sentence, as_of):
        positions = [words.find(source) for source in sources]
        assert -1 not in positions and positions == sorted(positions), (words, positions)
    assert "carry none" not in as_of  # the old help said CSV exports have no as-of


def test_the_help_of_review_and_send_tasks_names_salesforce_too():
    from reviews.management.commands.send_tasks import Command as SendTasks

    as_of = help_text().rsplit("--as-of AS_OF", 1)[1].split("--worker", 1)[0]
    assert "Salesforce export's LastModifiedDate or SystemModstamp" in as_of
    assert "Salesforce's Data Export, Data Loader or report files" in help_text()
    tasks = " ".join(SendTasks().create_parser("manage.py", "send_tasks").format_help().split())
    assert "(HubSpot or Salesforce)" in tasks and "as HubSpot tasks" not in tasks
