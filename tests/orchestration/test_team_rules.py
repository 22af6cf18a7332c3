"""A team's own rules through the real paths (issue 36): `manage.py rules` on a dataset
whose syncs are HubSpot CSV exports with the team's custom columns; the rules' findings
in the next review like any other kind's (severity, verdict, history, dismissals, the
fix plan, CSV); hostile rule files refused whole, with a message and no traceback."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from alerts.payloads import message
from reviews.models import Dataset, Finding, PolicyVersion, ReviewRun
from reviews.orchestration.dataset import policies
from reviews.orchestration.dataset.dismissals import dismiss
from reviews.orchestration.fixes.fixplan import plan_for_run
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from reviews.reports.exports import findings_csv_lines
from reviews.search import search_findings
from tests.engine.team_rules.exports import AS_OF, DEALS, export_files

pytestmark = pytest.mark.django_db

RULES = """
rules:
  - id: contract_sent_no_next_step
    object: deals
    when: >-
      "Deal Stage" = 'Contract Sent' AND coalesce(trim("Next Step"), '') = ''
    severity: critical
    title: Contract sent with no next step
    fix: Write the next step on the deal
  - id: eu_company_without_vat
    object: companies
    when: >-
      "Country/Region" IN ('Germany', 'France', 'DE') AND coalesce(trim("VAT Number"), '') = ''
    severity: warning
    title: EU company without a VAT number
    fix: Ask finance for the VAT number
  - id: renewal_closing_unowned
    object: deals
    when: >-
      "Deal Type" = 'existingbusiness' AND owner IS NULL
      AND date_diff('day', as_of, close_date) BETWEEN 0 AND 30
    severity: warning
    title: Renewal closing within 30 days with nobody on it
    fix: Give the renewal an owner
  - id: phone_not_e164
    object: contacts
    when: >-
      "Phone Number" IS NOT NULL
      AND NOT regexp_full_match("Phone Number", '\\+[1-9][0-9]{6,14}')
    severity: suggestion
    title: Phone number not in international format
    fix: Write it as +<country><number>
"""
EXPECTED = {
    ("contract_sent_no_next_step", "critical"): ["5001"],
    ("eu_company_without_vat", "warning"): ["9002", "9004"],
    ("renewal_closing_unowned", "warning"): ["5002", "5003"],
    ("phone_not_e164", "suggestion"): ["7002"],
}


def rules_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("rules", *args, stdout=out, stderr=err)
    except CommandError as error:  # how manage.py exits: the message, no traceback
        return error.returncode, out.getvalue(), str(error)
    return 0, out.getvalue(), err.getvalue()


def reviewed(files=None, dataset: str = "acme") -> ReviewRun:
    submission = submit(
        files or export_files(), as_of=AS_OF, dataset=dataset, dispatch=False, no_cache=True
    )
    assert submission.accepted, submission.errors
    start_review.apply(kwargs={"run_id": submission.run.pk})
    submission.run.refresh_from_db()
    return submission.run


def team_findings(run: ReviewRun) -> dict[tuple[str, str], list[str]]:
    found: dict[tuple[str, str], list[str]] = {}
    for finding in Finding.objects.filter(run_id=run.findings_run_id, category="team_rules"):
        found.setdefault((finding.kind, finding.severity), []).extend(finding.record_ids)
    return {key: sorted(ids) for key, ids in found.items()}


@pytest.fixture
def rule_file(tmp_path: Path) -> Path:
    path = tmp_path / "rules.yaml"
    path.write_text(RULES)
    return path


def test_preview_add_list_and_the_next_review_flag_exactly_the_described_records(rule_file):
    first = reviewed()
    code, out, _ = rules_cli(
        "preview", "--dataset", "acme", "--file", str(rule_file), "--format", "json"
    )
    assert code == 0
    preview = json.loads(out)
    assert {(r["id"], r["severity"]): sorted(r["record_ids"]) for r in preview["rules"]} == EXPECTED
    by_id = {r["id"]: r for r in preview["rules"]}
    assert by_id["contract_sent_no_next_step"]["records"] == [
        {"id": "5001", "name": "Vertex — cell automation"}
    ]
    assert by_id["renewal_closing_unowned"]["replay"] == [
        {
            "sync": first.batch_id,
            "as_of": first.batch.as_of.isoformat(),
            "status": "ran",
            "count": 2,
        }
    ]
    # "already flagged": the records the last sync's run flagged with a built-in kind
    flagged = {i for f in Finding.objects.filter(run=first) for i in f.record_ids}
    assert by_id["eu_company_without_vat"]["already_flagged"] == len({"9002", "9004"} & flagged)
    assert not PolicyVersion.objects.exists()  # a preview stores nothing

    code, out, _ = rules_cli(
        "add", "--dataset", "acme", "--file", str(rule_file), "--reason", "our checks"
    )
    assert (code, out.strip()) == (
        0,
        "policy version 1: added contract_sent_no_next_step, eu_company_without_vat, "
        "renewal_closing_unowned, phone_not_e164",
    )
    code, out, _ = rules_cli("list", "--dataset", "acme", "--format", "json")
    assert [r["id"] for r in json.loads(out)["rules"]] == [key[0] for key in EXPECTED]

    second = reviewed()
    assert second.mode == ReviewRun.Mode.FRESH
    assert team_findings(second) == EXPECTED
    assert second.verdict.decision == "request_changes"  # the team's critical decides it
    assert [r["status"] for r in second.team_rules] == ["ran"] * 4
    finding = Finding.objects.get(run=second, kind="contract_sent_no_next_step")
    assert finding.owners == ["Ana Ortiz"]
    assert finding.suggested_fix == "Write the next step on the deal"
    assert finding.status == Finding.Status.NEW
    # the webhook and the CSV carry them like any other kind's
    assert message(second, ["request_changes"])["run"]["team_rules"] == second.team_rules
    assert message(second, [])["counts"]["critical"] >= 1
    csv = "".join(findings_csv_lines(Finding.objects.filter(run=second)))
    assert "contract_sent_no_next_step" in csv and "Write the next step on the deal" in csv
    # and search finds them by their kind, as it finds a built-in kind
    found = search_findings(Finding.objects.filter(run=second), "next_step")
    assert {f.kind for f in found} == {"contract_sent_no_next_step"}


def test_team_findings_go_through_history_dismissals_and_the_fix_plan(rule_file, django_user_model):
    reviewed()
    assert rules_cli("add", "--dataset", "acme", "--file", str(rule_file))[0] == 0
    first = reviewed()
    dataset = Dataset.objects.get(name="acme")
    critical = Finding.objects.get(run=first, kind="contract_sent_no_next_step")
    dismiss(dataset, critical.fingerprint, reason="signed on paper", user=None)
    plan = plan_for_run(first)
    task = next(t for t in plan.tasks if t.kind == "eu_company_without_vat")
    assert (task.object, task.property, task.severity) == ("companies", "", "warning")

    fixed = [row[:] for row in DEALS]
    fixed[2][7] = "Ben Li"  # 5002 gets an owner: its renewal finding resolves
    second = reviewed(export_files(deals=fixed))
    statuses = {
        (f.kind, f.record_ids[0]): f.status
        for f in Finding.objects.filter(run=second, category="team_rules")
    }
    assert statuses[("renewal_closing_unowned", "5003")] == Finding.Status.OPEN
    assert ("renewal_closing_unowned", "5002") not in statuses
    assert ("contract_sent_no_next_step", "5001") not in statuses  # dismissed
    assert any(s["kind"] == "contract_sent_no_next_step" for s in second.suppressed)
    assert any(r["kind"] == "renewal_closing_unowned" for r in second.resolved)
    assert second.verdict.decision != "request_changes"  # its only critical was dismissed


def test_a_rule_naming_a_property_the_batch_lacks_is_reported_could_not_run(tmp_path):
    reviewed()
    path = tmp_path / "forecast.yaml"
    path.write_text(
        "rules:\n  - {id: forecast_commit_unowned, object: deals, severity: critical,\n"
        '     when: "\\"Forecast Category\\" = \'commit\' AND owner IS NULL",\n'
        "     title: Committed deal without owner, fix: Assign it}\n"
    )
    assert rules_cli("add", "--dataset", "acme", "--file", str(path))[0] == 0
    run = reviewed()
    assert run.status == ReviewRun.Status.DONE
    assert run.team_rules == [
        {
            "id": "forecast_commit_unowned",
            "object": "deals",
            "severity": "critical",
            "status": "could_not_run",
            "count": None,
            "why": 'the batch\'s deals have no "Forecast Category"',
        }
    ]
    assert "1 team rule could not run on this batch: forecast_commit_unowned" in (
        run.verdict.summary
    )
    assert run.verdict.decision == "request_changes"  # unknown, not passed


def test_the_run_page_says_which_team_rule_could_not_run(tmp_path, client, django_user_model):
    test_a_rule_naming_a_property_the_batch_lacks_is_reported_could_not_run(tmp_path)
    run = ReviewRun.objects.order_by("-pk").first()
    client.force_login(django_user_model.objects.create_user("boss", is_staff=True))
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'data-rule="forecast_commit_unowned" data-status="could_not_run"' in page
    assert (
        "could not run</strong>: the batch&#x27;s deals have no &quot;Forecast Category&quot;"
        in page
    )


GOOD_RULE = "{id: fine, object: deals, severity: warning, title: t, fix: f, when: 'true'}"
HOSTILE = {
    "reads a file": (
        "rules: [{id: r1, object: deals, severity: warning, title: t, fix: f,"
        " when: \"read_text('/etc/passwd') <> ''\"}]",
        "rule r1: when: line 1, column 1: function read_text() is not allowed",
    ),
    "two statements": (
        "rules: [{id: r1, object: deals, severity: warning, title: t, fix: f,"
        " when: 'amount > 1; DROP TABLE deals'}]",
        "rule r1: when: line 1, column 11: one expression only, not 2 statements",
    ),
    "getenv": (
        "rules: [{id: r1, object: deals, severity: warning, title: t, fix: f,"
        " when: \"getenv('SECRET_KEY') IS NOT NULL\"}]",
        "rule r1: when: line 1, column 1: function getenv() is not allowed",
    ),
    "a setting": (
        "rules: [{id: r1, object: deals, severity: warning, title: t, fix: f,"
        ' when: "SET enable_external_access = true"}]',
        "rule r1: when: line 1, column 1: `SET enable_external_access = TRUE` is not allowed",
    ),
    "a syntax error": (
        "rules: [{id: r1, object: deals, severity: warning, title: t, fix: f,"
        " when: 'amount > AND owner'}]",
        "rule r1: when: line 1, column",
    ),
    "an unknown object": (
        "rules: [{id: r1, object: tickets, severity: warning, title: t, fix: f, when: 'true'}]",
        "rule r1: unknown object 'tickets'",
    ),
    "an unknown severity": (
        "rules: [{id: r1, object: deals, severity: blocker, title: t, fix: f, when: 'true'}]",
        "rule r1: unknown severity 'blocker'",
    ),
    "a built-in kind's name": (
        "rules: [{id: negative_amount, object: deals, severity: warning, title: t, fix: f,"
        " when: 'amount < 0'}]",
        "rule negative_amount: id 'negative_amount' is a built-in kind",
    ),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_rule_files_are_refused_whole_with_a_message(name, tmp_path, capfd):
    reviewed()
    text, expected = HOSTILE[name]
    path = tmp_path / "hostile.yaml"
    # a good rule first: the file is refused whole, the good rule with it
    path.write_text(text.replace("rules: [", f"rules: [{GOOD_RULE}, "))
    for action in ("add", "preview"):
        code, _out, message = rules_cli(action, "--dataset", "acme", "--file", str(path))
        assert code == 2
        assert "refused, nothing stored" in message
        assert expected in message, message
        assert "Traceback" not in message
    assert not PolicyVersion.objects.exists()
    assert policies.current(Dataset.objects.get(name="acme"))[0] is None


def test_remove_makes_a_new_version_with_who_and_why(rule_file, django_user_model):
    reviewed()
    django_user_model.objects.create_user("dana")
    rules_cli("add", "--dataset", "acme", "--file", str(rule_file), "--user", "dana")
    code, out, _ = rules_cli(
        "remove",
        "--dataset",
        "acme",
        "--id",
        "phone_not_e164",
        "--reason",
        "noisy",
        "--user",
        "dana",
    )
    assert (code, out.strip()) == (0, "policy version 2: removed phone_not_e164")
    version = PolicyVersion.objects.get(number=2)
    assert (version.reason, version.created_by.username) == ("noisy", "dana")
    code, _, message = rules_cli("remove", "--dataset", "acme", "--id", "phone_not_e164")
    assert code == 2 and "has no team rule 'phone_not_e164'" in message


def test_a_rule_that_could_not_run_resolves_none_of_its_open_problems(rule_file):
    reviewed()
    assert rules_cli("add", "--dataset", "acme", "--file", str(rule_file))[0] == 0
    first = reviewed()
    assert team_findings(first)[("renewal_closing_unowned", "warning")] == ["5002", "5003"]
    column = DEALS[0].index("Deal Type")
    without = [row[:column] + row[column + 1 :] for row in DEALS]  # no "Deal Type"
    second = reviewed(export_files(deals=without))
    statuses = {r["id"]: r["status"] for r in second.team_rules}
    assert statuses["renewal_closing_unowned"] == "could_not_run"
    assert not [r for r in second.resolved if r["kind"] == "renewal_closing_unowned"]


def test_an_export_without_deals_runs_no_deal_rule_and_no_deal_count(tmp_path):
    reviewed()
    library = Path(__file__).resolve().parents[2] / "reviews/engine/team_rules/library"
    for name in ("customer_without_won_deal.yaml", "deal_without_contact.yaml"):
        assert rules_cli("add", "--dataset", "acme", "--file", str(library / name))[0] == 0
    run = reviewed([f for f in export_files() if "deals" not in f.name])
    assert {r["id"]: r["status"] for r in run.team_rules} == {
        "customer_without_won_deal": "could_not_run",
        "deal_without_contact": "could_not_run",
    }
    assert not team_findings(run)


def test_a_rule_that_would_fail_on_every_sync_is_refused_when_added(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        "rules:\n"
        "  - {id: bad_pattern, object: deals, severity: warning, title: t, fix: f,\n"
        "     when: \"regexp_matches(name, '(')\"}\n"
        "  - {id: text_above_five, object: deals, severity: warning, title: t, fix: f,\n"
        "     when: '\"Next Step\" > 5'}\n"
        "  - {id: forecast_later, object: deals, severity: warning, title: t, fix: f,\n"
        '     when: "\\"Forecast Category\\" = \'commit\'"}\n'  # not in this sync: fine
    )
    Dataset.objects.create(name="fresh", workspace=reviewed().batch.workspace)  # no sync
    for dataset in ("acme", "fresh"):
        code, _out, error = rules_cli("add", "--dataset", dataset, "--file", str(broken))
        assert code == 2, error
        assert "bad_pattern: Invalid Input Error: missing ): (" in error
        assert ("text_above_five: Binder Error: Cannot compare" in error) == (dataset == "acme")
        assert "forecast_later" not in error
    code, _out, error = rules_cli("preview", "--dataset", "acme", "--file", str(broken))
    assert code == 2 and "bad_pattern" in error
    assert not PolicyVersion.objects.exists()


def test_a_rule_removed_or_a_kind_switched_off_resolves_none_of_its_problems(rule_file):
    reviewed()
    assert rules_cli("add", "--dataset", "acme", "--file", str(rule_file))[0] == 0
    first = reviewed()
    assert ("phone_not_e164", "suggestion") in team_findings(first)
    assert rules_cli("remove", "--dataset", "acme", "--id", "phone_not_e164")[0] == 0
    dataset = Dataset.objects.get(name="acme")
    _, policy = policies.current(dataset)
    off = replace(policy, off=frozenset({"eu_company_without_vat"}))
    policies.save(dataset, off, reason="switched off")
    second = reviewed()
    assert {r["id"] for r in second.team_rules} == {
        "contract_sent_no_next_step",
        "renewal_closing_unowned",
        "eu_company_without_vat",
    }
    assert ("eu_company_without_vat", "warning") not in team_findings(second)
    resolved = {r["kind"] for r in second.resolved}
    assert not resolved & {"phone_not_e164", "eu_company_without_vat"}, second.resolved


def test_adding_says_added_changed_or_unchanged_and_makes_no_empty_version(rule_file, tmp_path):
    reviewed()
    assert rules_cli("add", "--dataset", "acme", "--file", str(rule_file))[0] == 0
    code, out, _ = rules_cli("add", "--dataset", "acme", "--file", str(rule_file))
    assert (code, out.strip()) == (
        0,
        "nothing changed: unchanged contract_sent_no_next_step, eu_company_without_vat, "
        "renewal_closing_unowned, phone_not_e164",
    )
    assert PolicyVersion.objects.count() == 1
    retitled = tmp_path / "retitled.yaml"
    retitled.write_text(
        RULES.replace("title: Contract sent with no next step", "title: Contract out, no step")
        + "  - {id: deal_without_name, object: deals, when: name IS NULL, severity: warning,\n"
        "     title: Deal without a name, fix: Name it}\n"
    )
    code, out, _ = rules_cli("add", "--dataset", "acme", "--file", str(retitled))
    assert (code, out.strip()) == (
        0,
        "policy version 2: added deal_without_name; changed contract_sent_no_next_step; "
        "unchanged eu_company_without_vat, renewal_closing_unowned, phone_not_e164",
    )
    [version] = policies.history(Dataset.objects.get(name="acme"))[:1]
    assert {"what": "team rule contract_sent_no_next_step",
            "before": "title: Contract sent with no next step",
            "after": "title: Contract out, no step"} in version["diff"]  # fmt: skip


def test_rules_before_the_first_sync_and_a_preview_in_words(rule_file):
    # a dataset with no sync yet takes rules; its first sync runs them
    code, out, _ = rules_cli("add", "--dataset", "later", "--file", str(rule_file))
    assert (code, out.strip().split(":")[0]) == (0, "policy version 1")
    run = reviewed(dataset="later")
    assert team_findings(run) == EXPECTED
    # an upload that named a dataset but was refused: the dataset has no sync yet
    refused = submit(
        [export_files()[0].__class__("deals.csv", b"\x00")], dataset="pending", dispatch=False
    )
    assert not refused.accepted
    code, _, message = rules_cli("list", "--dataset", "pending")
    assert (code, message) == (2, "dataset 'pending' has no sync yet (none of its uploads has been accepted)")  # fmt: skip  # noqa: E501
    assert rules_cli("list", "--dataset", "nowhere")[2] == "no dataset named 'nowhere'"
    code, out, _ = rules_cli("preview", "--dataset", "later", "--file", str(rule_file))
    assert "contract_sent_no_next_step: 1 record (" in out
    assert "eu_company_without_vat: 2 records (" in out


def test_a_preview_reads_the_last_syncs_tables_once(monkeypatch):
    from reviews.engine.team_rules.rulefile import load
    from reviews.orchestration.dataset import team_rules
    from reviews.orchestration.store import tables

    reviewed()
    reads = []
    real = tables.tables_for
    monkeypatch.setattr(
        team_rules, "tables_for", lambda batch: reads.append(batch.pk) or real(batch)
    )
    preview = team_rules.preview(Dataset.objects.get(name="acme"), load(RULES), replay=False)
    assert {r["id"]: r["status"] for r in preview["rules"]} == dict.fromkeys(
        [r for r, _ in EXPECTED], "ran"
    )
    assert len(reads) == 1  # checked, then run, on one read of its Parquet
