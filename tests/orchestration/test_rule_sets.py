"""Workspace rule sets (docs/rules.md#workspace-rule-sets): written once, used by many
datasets; a new version of the set makes a new policy version for each dataset using it
(who, when, why), runs and cache keys follow; a clash with a dataset's own rule is
refused whole."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from reviews.models import Dataset, Finding, PolicyVersion, ReviewRun, RuleSet
from reviews.orchestration.dataset import policies
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from tests.engine.team_rules.exports import AS_OF, export_files

pytestmark = pytest.mark.django_db

SET_V1 = """
rules:
  - {id: open_deal_unowned, object: deals, severity: warning, title: Open deal without owner,
     fix: Assign it, when: "owner IS NULL AND is_closed IS NOT TRUE"}
"""
SET_V2 = """
rules:
  - {id: open_deal_unowned, object: deals, severity: critical, title: Open deal without owner,
     fix: Assign it, when: "owner IS NULL AND is_closed IS NOT TRUE"}
  - {id: company_without_domain, object: companies, severity: suggestion,
     title: Company without domain, fix: Add it, when: "domain IS NULL"}
"""


def cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("rules", *args, stdout=out, stderr=io.StringIO())
    except CommandError as error:
        return error.returncode, str(error)
    return 0, out.getvalue()


def reviewed(dataset: str) -> ReviewRun:
    submission = submit(export_files(), as_of=AS_OF, dataset=dataset, dispatch=False)
    start_review.apply(kwargs={"run_id": submission.run.pk})
    submission.run.refresh_from_db()
    return submission.run


def kinds(run: ReviewRun) -> dict[str, tuple[str, list[str]]]:
    found: dict[str, tuple[str, list[str]]] = {}
    for f in Finding.objects.filter(run_id=run.findings_run_id, category="team_rules"):
        severity, ids = found.setdefault(f.kind, (f.severity, []))
        ids += f.record_ids
    return {kind: (sev, sorted(ids)) for kind, (sev, ids) in found.items()}


def test_a_set_used_by_two_datasets_versioned_and_followed(tmp_path: Path):
    for name in ("emea", "amer", "apac"):
        reviewed(name)
    v1, v2 = tmp_path / "v1.yaml", tmp_path / "v2.yaml"
    v1.write_text(SET_V1)
    v2.write_text(SET_V2)
    assert cli("set-add", "--set", "hygiene", "--file", str(v1), "--reason", "first")[0] == 0
    assert cli("use", "--dataset", "emea", "--set", "hygiene")[0] == 0
    assert cli("use", "--dataset", "amer", "--set", "hygiene")[0] == 0

    run = reviewed("emea")
    assert run.mode == ReviewRun.Mode.FRESH  # the policy changed: the cache key with it
    assert kinds(run) == {"open_deal_unowned": ("warning", ["5002", "5003"])}
    assert kinds(reviewed("apac")) == {}  # does not use the set

    code, out = cli("set-add", "--set", "hygiene", "--file", str(v2), "--reason", "stricter")
    assert (code, out.strip()) == (0, "rule set hygiene version 2: amer, emea")
    latest = PolicyVersion.objects.filter(dataset__name="emea").order_by("-number").first()
    assert latest.reason == "workspace rule set hygiene version 2: stricter"
    history = policies.history(Dataset.objects.get(name="emea"))
    assert {"what": "rule set hygiene", "before": "version 1", "after": "version 2"} in (
        history[0]["diff"]
    )
    run = reviewed("emea")
    assert kinds(run) == {
        "open_deal_unowned": ("critical", ["5002", "5003"]),
        "company_without_domain": ("suggestion", ["9003"]),
    }
    # seen in the last sync as warnings: open, not new (the verdict scope counts new ones)
    assert set(
        Finding.objects.filter(run=run, kind="open_deal_unowned").values_list("status", flat=True)
    ) == {"open"}

    code, out = cli("list", "--dataset", "amer", "--format", "json")
    listed = json.loads(out)
    assert listed["rules"] == [] and listed["rule_sets"][0]["version"] == 2
    code, out = cli("sets", "--format", "json")
    [item] = json.loads(out)["rule_sets"]
    assert (item["name"], item["version"], item["datasets"]) == ("hygiene", 2, ["amer", "emea"])

    assert cli("unuse", "--dataset", "amer", "--set", "hygiene")[0] == 0
    assert kinds(reviewed("amer")) == {}


def test_a_set_clashing_with_a_dataset_s_own_rule_is_refused_whole(tmp_path: Path):
    reviewed("emea")
    own = tmp_path / "own.yaml"
    own.write_text(SET_V1.replace("severity: warning", "severity: suggestion"))
    assert cli("add", "--dataset", "emea", "--file", str(own))[0] == 0
    v1 = tmp_path / "v1.yaml"
    v1.write_text(SET_V2.replace("open_deal_unowned", "deal_unowned"))
    assert cli("set-add", "--set", "hygiene", "--file", str(v1), "--reason", "r")[0] == 0
    assert cli("use", "--dataset", "emea", "--set", "hygiene")[0] == 0
    clash = tmp_path / "clash.yaml"
    clash.write_text(SET_V2)  # open_deal_unowned is the dataset's own rule's id
    code, message = cli("set-add", "--set", "hygiene", "--file", str(clash), "--reason", "r")
    assert code == 2
    assert "dataset emea: team rule id(s) open_deal_unowned used twice" in message
    assert RuleSet.objects.count() == 1  # nothing stored
    code, message = cli("use", "--dataset", "emea", "--set", "nope")
    assert code == 2 and "no rule set 'nope'" in message


def test_a_clash_between_two_sets_names_the_two_sets_only(tmp_path: Path):
    """QA: two sets sharing an id were said to clash "in the dataset's own rules and its
    rule sets hygiene, hygiene2"; the dataset has no rules of its own."""
    reviewed("emea")
    v1 = tmp_path / "v1.yaml"
    v1.write_text(SET_V1)
    assert cli("set-add", "--set", "hygiene", "--file", str(v1), "--reason", "r")[0] == 0
    assert cli("set-add", "--set", "hygiene2", "--file", str(v1), "--reason", "r")[0] == 0
    other = tmp_path / "other.yaml"
    other.write_text(SET_V2.replace("open_deal_unowned", "deal_unowned"))
    assert cli("set-add", "--set", "other", "--file", str(other), "--reason", "r")[0] == 0
    assert cli("use", "--dataset", "emea", "--set", "other")[0] == 0
    assert cli("use", "--dataset", "emea", "--set", "hygiene")[0] == 0
    code, message = cli("use", "--dataset", "emea", "--set", "hygiene2")
    assert code == 2
    assert (
        "team rule id(s) open_deal_unowned used twice: in rule set hygiene (version 1) and "
        "rule set hygiene2 (version 1); rename one"
    ) in message
    assert "own rules" not in message and "other" not in message
