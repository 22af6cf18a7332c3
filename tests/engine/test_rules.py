"""The review's rules as data (reviews.engine.rules): defaults of its own, validated
overrides, one reading of the environment. No Django here."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from decimal import Decimal

import pytest

from reviews.engine.rules import DEFAULT_RULES, Rules
from tests.services import ROOT


def run_python(script: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


def test_the_defaults_are_the_documented_ones():
    rules = Rules()
    assert rules == DEFAULT_RULES
    assert rules.stale_enrichment_days == 180
    assert rules.person_name_fuzzy_ratio == 92
    assert rules.deal_amount_tolerance_pct == Decimal("1")
    assert (rules.tier_trivial_max_score, rules.tier_lite_max_score) == (8, 20)
    assert rules.high_value_deal_amount == Decimal("100000")


def test_rules_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Rules().stale_enrichment_days = 90  # type: ignore[misc]


def test_overrides_change_only_what_they_name_and_keep_types():
    rules = Rules().with_overrides(
        {"stale_enrichment_days": "90", "deal_amount_tolerance_pct": 2, "amount_typo_factor": "50"}
    )
    assert rules.stale_enrichment_days == 90
    assert rules.deal_amount_tolerance_pct == Decimal(2)
    assert rules.amount_typo_factor == Decimal(50)
    assert rules.person_name_fuzzy_ratio == 92
    assert Rules().with_overrides({}) == Rules()


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"stale_days": 90}, "unknown rule 'stale_days'; known: person_name_fuzzy_ratio"),
        ({"stale_enrichment_days": "soon"}, "stale_enrichment_days must be an integer, got str"),
        ({"stale_enrichment_days": True}, "stale_enrichment_days must be an integer, got bool"),
        ({"stale_enrichment_days": 90.5}, "stale_enrichment_days must be an integer, got float"),
        ({"deal_amount_tolerance_pct": 1.5}, "deal_amount_tolerance_pct must be a number"),
        ({"deal_amount_tolerance_pct": "NaN"}, "must be a finite number"),
        ({"person_name_fuzzy_ratio": 101}, "person_name_fuzzy_ratio must be between 0 and 100"),
        ({"stale_enrichment_days": -1}, "stale_enrichment_days must be at least 0"),
        ({"fuzzy_window": 0}, "fuzzy_window must be at least 1"),
        ({"tier_lite_max_score": 5}, "tier_lite_max_score (5) must be at least tier_trivial"),
    ],
)
def test_a_bad_override_is_refused_naming_the_field(overrides, message):
    with pytest.raises(ValueError) as error:
        Rules().with_overrides(overrides)
    assert message in str(error.value)


def test_the_environment_is_read_by_setting_name():
    rules = Rules.from_env(
        {"RULE_STALE_ENRICHMENT_DAYS": " 90 ", "HIGH_VALUE_DEAL_AMOUNT": "250000", "OTHER": "x"}
    )
    assert rules == Rules().with_overrides(
        {"stale_enrichment_days": 90, "high_value_deal_amount": Decimal(250000)}
    )
    assert Rules.from_env({"RULE_STALE_ENRICHMENT_DAYS": ""}) == Rules()
    with pytest.raises(ValueError, match="RULE_FUZZY_WINDOW: rule fuzzy_window must be an integer"):
        Rules.from_env({"RULE_FUZZY_WINDOW": "wide"})
    with pytest.raises(ValueError, match="TIER_LITE_MAX_SCORE|tier_lite_max_score"):
        Rules.from_env({"TIER_LITE_MAX_SCORE": "2"})


def test_describe_lists_every_field_with_its_setting_default_and_meaning():
    described = Rules.describe()
    assert [info.name for info in described] == list(Rules().as_dict())
    assert {info.name: info.default for info in described} == Rules().as_dict()
    assert len({info.setting for info in described}) == len(described)
    assert all(info.meaning for info in described)
    assert Rules.setting_of("stale_enrichment_days") == "RULE_STALE_ENRICHMENT_DAYS"


@pytest.mark.slow
def test_the_settings_module_builds_the_rules_from_the_environment():
    """The one place the environment is read: settings.REVIEW_RULES."""
    script = (
        "import os\n"
        "os.environ['RULE_STALE_ENRICHMENT_DAYS'] = '45'\n"
        "from revreview import settings\n"
        "print(settings.REVIEW_RULES.stale_enrichment_days)\n"
    )
    result = run_python(script)
    assert result.stdout.strip() == "45", result.stderr
    bad = script.replace("'45'", "'soon'")
    result = run_python(bad)
    assert "ImproperlyConfigured" in result.stderr
    assert "RULE_STALE_ENRICHMENT_DAYS" in result.stderr


def test_the_engine_reviews_a_batch_with_its_own_defaults_where_django_cannot_load():
    script = (
        "import sys\n"
        "sys.modules['django'] = None\n"
        "from datetime import UTC, datetime\n"
        "from pathlib import Path\n"
        "from reviews.engine.coordinator import fuse\n"
        "from reviews.engine.ingest import UploadedFile, parse_upload\n"
        "from reviews.engine.risk import classify_risk\n"
        "from reviews.engine.rules import Rules\n"
        "from reviews.engine.specialists import NAMES, detector\n"
        "data = Path('tests/data/seed-example.json').read_bytes()\n"
        "batch = parse_upload([UploadedFile('b.json', data)], as_of=None,\n"
        "                     received_at=datetime.now(UTC))\n"
        "found = [f for name in NAMES for f in detector(name)(batch, Rules())]\n"
        "review = fuse(found, batch.counts, [])\n"
        "print(classify_risk(batch).tier, review.decision, len(review.findings))\n"
    )
    result = run_python(script)
    assert result.returncode == 0, result.stderr
    tier, decision, count = result.stdout.split()
    assert (tier, decision) == ("trivial", "approve_with_comments") and int(count) > 0


def test_every_rules_setting_is_in_the_settings_document():
    # README.md's table until the documentation split moves it all to docs/settings.md.
    text = (ROOT / "docs" / "settings.md").read_text() + (ROOT / "README.md").read_text()
    missing = [info.setting for info in Rules.describe() if f"`{info.setting}`" not in text]
    assert missing == []
