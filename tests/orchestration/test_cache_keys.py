"""content_key (the batch's content) and config_fingerprint (the review configuration)."""

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ledger.models import ModelRate
from reviews.engine.ingest import UploadedFile, parse_upload
from reviews.orchestration.serving import decide as serving
from reviews.orchestration.serving.decide import config_fingerprint, content_key
from tests.orchestration.helpers import parse, seed_batch


def reordered(batch: dict) -> str:
    """The same batch: keys reversed, records reversed, other whitespace, amount as text."""
    flipped = {
        name: [dict(reversed(list(r.items()))) for r in reversed(records)]
        if isinstance(records, list)
        else records
        for name, records in reversed(list(batch.items()))
    }
    flipped["deals"][0]["amount"] = "410000.00"
    return json.dumps(flipped, indent=4)


def test_content_key_equal_for_reordered_identical_batch():
    batch = seed_batch()
    assert content_key(parse(json.dumps(batch))) == content_key(parse(reordered(batch)))


def test_content_key_differs_when_a_value_changes():
    batch = seed_batch()
    changed = seed_batch()
    changed["contacts"][1]["email"] = "dana@vertexrobotics.example"
    assert content_key(parse(json.dumps(batch))) != content_key(parse(json.dumps(changed)))


@pytest.mark.parametrize("notes", [("old", "new"), ("old\x00", "new\x00")])
def test_content_key_differs_when_a_field_no_rule_reads_changes(notes):
    # Kept as text by the batch (extra_fields.py); with a NUL, rewritten by the clean-up.
    batch, changed = seed_batch(), seed_batch()
    batch["companies"][0]["notes"], changed["companies"][0]["notes"] = notes
    parsed = parse(json.dumps(batch))
    assert parsed.extras["companies"].get(0)["notes"].startswith("old")
    assert content_key(parsed) != content_key(parse(json.dumps(changed)))
    assert content_key(parsed) == content_key(parse(reordered(batch)))


def test_content_key_differs_when_the_as_of_time_changes():
    batch = seed_batch()
    later = seed_batch()
    later["exportedAt"] = "2026-09-01T09:00:00Z"
    assert content_key(parse(json.dumps(batch))) != content_key(parse(json.dumps(later)))


def test_content_key_ignores_position_of_an_invalid_value():
    batch = seed_batch()
    batch["deals"].append({"id": "dl_202", "name": "x", "amount": "41O000", "companyId": "co_202"})
    moved = seed_batch()
    moved["deals"].insert(0, dict(batch["deals"][1]))
    assert content_key(parse(json.dumps(batch))) == content_key(parse(json.dumps(moved)))


@pytest.mark.django_db
def test_config_fingerprint_is_stable():
    assert config_fingerprint() == config_fingerprint()


@pytest.mark.django_db
def test_config_fingerprint_changes_when_a_rule_threshold_changes(settings):
    before = config_fingerprint()
    settings.REVIEW_RULES = settings.REVIEW_RULES.with_overrides({"stale_enrichment_days": 90})
    assert config_fingerprint() != before


@pytest.mark.django_db
def test_config_fingerprint_changes_when_a_model_rate_changes(postgres):
    before = config_fingerprint()
    rate = ModelRate.objects.order_by("pk").first()
    assert rate is not None  # seeded by the ledger migration
    rate.output_usd_per_m += 1
    rate.save()
    assert config_fingerprint() != before


@pytest.mark.django_db
def test_config_fingerprint_changes_when_a_prompt_changes(tmp_path, monkeypatch):
    monkeypatch.setattr(serving, "PROMPTS_DIR", tmp_path)
    (tmp_path / "shared.md").write_text("Flag duplicates.")
    before = config_fingerprint()
    (tmp_path / "shared.md").write_text("Flag duplicates and typos.")
    assert config_fingerprint() != before


HUBSPOT = Path(__file__).resolve().parents[2] / "samples" / "hubspot"


def _hubspot_export(companies: bytes) -> list[UploadedFile]:
    """The sample HubSpot export with `companies` as its companies.csv."""
    return [
        UploadedFile(path.name, companies if path.name == "companies.csv" else path.read_bytes())
        for path in sorted(HUBSPOT.glob("*.csv"))
    ]


def test_content_key_of_an_export_whose_records_keep_their_own_fields():
    # A CSV reader keeps each record's unread columns in the record (no ExtraFields):
    # its rows reversed are the same content; one Industry changed is not.
    text = (HUBSPOT / "companies.csv").read_text(encoding="utf-8-sig")
    header, *rows = text.splitlines(keepends=True)
    as_of = datetime(2026, 8, 1, tzinfo=UTC)

    def key(companies: str) -> str:
        parsed = parse_upload(_hubspot_export(companies.encode()), as_of=as_of, received_at=as_of)
        assert "companies" not in parsed.extras and parsed.companies[0].extra
        return content_key(parsed)

    assert key(header + "".join(rows)) == key(header + "".join(reversed(rows)))
    changed = [rows[0].replace("COMPUTER_SOFTWARE", "RETAIL", 1), *rows[1:]]
    assert changed[0] != rows[0]
    assert key(header + "".join(rows)) != key(header + "".join(changed))
