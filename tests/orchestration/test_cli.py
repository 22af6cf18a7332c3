"""manage.py review: the JSON of docs/output.md, exit codes, and how the review is served (cache,
--no-cache, failback when the daily token budget is spent)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from ledger import budget
from reviews.models import AgentRun, Batch, ReviewRun
from tests.orchestration.helpers import make_entry
from tests.uploads import DATA

pytestmark = pytest.mark.django_db

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
SEED = DATA / "seed-example.json"

RUN_KEYS = {
    "id", "mode", "tier", "specialists", "status", "degraded", "started_at", "finished_at",
    "as_of", "as_of_source", "partial", "missing_lists", "missing_columns", "switched_off",
}  # fmt: skip
FINDING_KEYS = {
    "category", "kind", "severity", "title", "detail", "record_ids", "suggested_fix",
    "confidence", "amount_at_risk", "currency", "source",
}  # fmt: skip
CALL_KEYS = {
    "agent", "model_requested", "model", "input_tokens", "cached_tokens", "output_tokens",
    "usd", "latency_ms", "outcome",
}  # fmt: skip


def review(*args: str | Path) -> tuple[int, str, str]:
    """Run the command; its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command("review", *map(str, args), stdout=out, stderr=err)
    return exit_.value.code, out.getvalue(), err.getvalue()


def review_json(*args: str | Path) -> tuple[int, dict]:
    code, out, _ = review(*args, "--format", "json")
    return code, json.loads(out)


def kinds(report: dict) -> set[str]:
    return {f["kind"] for f in report["findings"]}


def spend_the_budget(settings, *, in_the_ledger: bool = False) -> None:
    """5,000 of today's 10,000 tokens are spent; one 8,000-token reservation would not
    fit. In the ledger: read when the day's counter is rebuilt (before any review
    today); else reserved, as a model call in flight would."""
    settings.DAILY_TOKEN_BUDGET = 10_000
    settings.BUDGET_RESERVATION_TOKENS = 8_000
    if in_the_ledger:
        make_entry(created_at=timezone.now(), input_tokens=4_000, output_tokens=1_000)
    else:
        assert budget.reserve(5_000) is not None


def assert_spec_shape(report: dict) -> None:
    assert set(report) == {"batch", "run", "verdict", "summary", "findings", "ledger"}
    assert set(report["batch"]) == {
        "id", "external_id", "sha256", "counts", "ignored_columns", "stage_source",
        "stage_sources",
    }  # fmt: skip
    assert set(report["batch"]["counts"]) == {"companies", "contacts", "deals"}
    assert RUN_KEYS <= set(report["run"])
    assert report["run"]["mode"] in {"fresh", "cached", "failback"}
    assert all(set(f) == FINDING_KEYS for f in report["findings"])
    assert {"tokens", "usd", "analyst_usd", "calls"} == set(report["ledger"])
    assert all(set(c) == CALL_KEYS for c in report["ledger"]["calls"])


def test_review_full_sample_is_request_changes_in_spec_json(postgres):
    code, report = review_json(SAMPLES / "full.json")
    assert code == 1
    assert_spec_shape(report)
    assert report["verdict"] == "request_changes"
    # batch.id is our database id everywhere (run JSON, API, webhook); the batch's own
    # id is external_id (docs/output.md).
    assert report["batch"]["id"] == Batch.objects.get().pk
    assert report["batch"]["external_id"] == "full"
    assert report["batch"]["counts"] == {"companies": 8, "contacts": 9, "deals": 12}
    run = report["run"]
    assert (run["mode"], run["tier"], run["status"], run["degraded"]) == (
        "fresh", "full", "done", False,
    )  # fmt: skip
    assert run["started_at"].endswith("Z") and run["finished_at"].endswith("Z")
    assert {"deal_entered_twice", "won_without_close_date", "negative_amount"} <= kinds(report)
    critical = [f for f in report["findings"] if f["severity"] == "critical"]
    assert {"dl_201", "dl_202"} <= {i for f in critical for i in f["record_ids"]}
    assert report["ledger"]["analyst_usd"] > 0


def test_review_clean_sample_approves_with_exit_0(postgres):
    code, report = review_json(SAMPLES / "clean.json")
    assert code == 0
    assert_spec_shape(report)
    assert report["verdict"] == "approve"
    assert report["findings"] == []


def test_review_exits_3_with_the_error_when_the_run_fails(postgres, monkeypatch):
    from reviews.engine import coordinator

    def crash(*args, **kwargs):  # stands in for any crash of the coordinator
        raise RuntimeError("the coordinator crashed")

    monkeypatch.setattr(coordinator, "fuse", crash)
    code, report = review_json(SAMPLES / "clean.json", "--no-cache")
    assert code == 3
    assert (report["run"]["status"], report["verdict"]) == ("failed", None)
    assert "the coordinator crashed" in report["run"]["error"]


def test_review_broken_sample_exits_2_naming_record_and_field(postgres):
    code, out, err = review(SAMPLES / "broken.json", "--format", "json")
    assert code == 2
    payload = json.loads(out)
    batch = Batch.objects.get()
    assert payload["batch"] == {
        "id": batch.pk,
        "external_id": None,
        "db_id": batch.pk,
        "sha256": batch.sha256,
    }
    errors = payload["errors"]
    assert any(e.startswith("companies[1].id") for e in errors)
    assert any(e.startswith("contacts[1].id") and "ct_501" in e for e in errors)
    assert "error: companies[1].id" in err
    assert ReviewRun.objects.count() == 0


def test_review_twice_serves_the_second_from_the_cache_at_no_cost(postgres):
    code, first = review_json(SEED)
    assert code == 0
    assert first["run"]["mode"] == "fresh"
    code, second = review_json(SEED)
    assert code == 0
    assert_spec_shape(second)
    assert second["run"]["mode"] == "cached"
    assert second["run"]["reused_run"] == first["run"]["id"]
    assert "reason" not in second["run"]
    assert second["run"]["id"] != first["run"]["id"]
    assert second["ledger"] == {**first["ledger"], "tokens": 0, "usd": 0.0, "calls": []}
    assert second["findings"] == first["findings"]
    assert (second["verdict"], second["summary"]) == (first["verdict"], first["summary"])
    assert (second["run"]["tier"], second["run"]["specialists"]) == (
        first["run"]["tier"], first["run"]["specialists"],
    )  # fmt: skip
    cached = ReviewRun.objects.get(pk=second["run"]["id"])
    assert set(cached.agents.values_list("status", "model")) == {(AgentRun.Status.DONE, "cached")}
    assert not cached.ledger_entries.exists()


def test_review_no_cache_reviews_afresh(postgres):
    _, first = review_json(SEED)
    _, second = review_json(SEED, "--no-cache")
    assert second["run"]["mode"] == "fresh"
    assert "reused_run" not in second["run"]
    assert second["findings"] == first["findings"]
    # The cache serves the newest good run.
    _, third = review_json(SEED)
    assert (third["run"]["mode"], third["run"]["reused_run"]) == ("cached", second["run"]["id"])


def test_review_after_a_threshold_change_misses_the_cache(postgres, settings):
    review_json(SEED)
    settings.REVIEW_RULES = settings.REVIEW_RULES.with_overrides({"stale_enrichment_days": 90})
    _, second = review_json(SEED)
    assert second["run"]["mode"] == "fresh"


def test_review_of_a_reordered_identical_batch_is_cached(postgres, tmp_path):
    _, first = review_json(SEED)
    batch = json.loads(SEED.read_text())
    batch["companies"].reverse()
    batch["contacts"].reverse()
    reordered = tmp_path / "reordered.json"
    reordered.write_text(json.dumps(batch, indent=4, sort_keys=True))
    _, second = review_json(reordered)
    assert second["batch"]["sha256"] != first["batch"]["sha256"]  # other bytes
    assert (second["run"]["mode"], second["run"]["reused_run"]) == ("cached", first["run"]["id"])
    assert second["findings"] == first["findings"]


def test_review_with_the_budget_spent_is_failback_by_the_detectors(postgres, redis_url, settings):
    spend_the_budget(settings, in_the_ledger=True)
    code, report = review_json(SEED)
    assert code == 0
    run = report["run"]
    assert (run["mode"], run["status"]) == ("failback", "done")
    assert run["reason"] == (
        "daily token budget exhausted: 5,000 of 10,000 tokens used today (UTC), "
        "8,000 needed for the review"
    )
    assert "reused_run" not in run  # no good run of this content to serve
    assert {"company_same_domain", "contact_same_email"} <= kinds(report)
    assert report["ledger"]["calls"] == []


def test_review_with_the_budget_spent_serves_the_last_good_run(postgres, redis_url, settings):
    _, first = review_json(SEED)
    spend_the_budget(settings)
    _, report = review_json(SEED, "--no-cache")
    run = report["run"]
    assert (run["mode"], run["reused_run"]) == ("failback", first["run"]["id"])
    assert run["reason"].startswith("daily token budget exhausted")
    assert report["findings"] == first["findings"]
    assert report["ledger"]["tokens"] == 0


def test_review_text_header_shows_mode_and_reason(postgres, redis_url, settings):
    review(SEED)
    spend_the_budget(settings)
    code, out, _ = review(SEED, "--no-cache")
    assert code == 0
    header = out.splitlines()[0]
    assert header.startswith("revreview run ")
    assert "(failback of run " in header and ", trivial tier)" in header
    assert header.endswith(
        ": daily token budget exhausted: 5,000 of 10,000 tokens used today (UTC), "
        "8,000 needed for the review"
    )


def test_review_text_names_a_csv_batch_by_its_files(postgres):
    csvs = sorted((SAMPLES / "hubspot").glob("*.csv"))
    code, out, _ = review(*csvs, "--as-of", "2026-08-01T09:00:00Z")
    batch_line = out.splitlines()[1]
    assert batch_line.startswith("batch companies.csv")
    assert "batch -" not in out


def test_review_of_an_empty_batch_says_it_was_empty(postgres, tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"id": "empty", "companies": [], "contacts": [], "deals": []}))
    code, report = review_json(empty)
    assert (code, report["verdict"]) == (0, "approve")
    assert report["summary"].startswith("The batch is empty")


def test_a_store_that_takes_nothing_is_no_verdict_and_keeps_nothing(settings, tmp_path):
    from django.core.management.base import CommandError

    not_a_folder = tmp_path / "store"
    not_a_folder.write_text("")  # the store's folder is a file: every write fails
    backend = "django.core.files.storage.FileSystemStorage"
    settings.STORAGES = {
        **settings.STORAGES,
        "batches": {"BACKEND": backend, "OPTIONS": {"location": str(not_a_folder)}},
    }
    with pytest.raises(CommandError) as error:
        call_command("review", str(SEED), stdout=io.StringIO(), stderr=io.StringIO())
    assert error.value.returncode == 3  # no verdict, never read as request_changes (1)
    assert str(error.value).startswith("the store did not take seed-example.json: ")
    assert not Batch.objects.exists()


@pytest.mark.parametrize(
    ("as_of", "error"),
    [
        ("2026-13-45", "not an ISO date or date-time: '2026-13-45' (month must be in 1..12)"),
        ("2026-02-30T09:00:00Z", "not an ISO date or date-time: '2026-02-30T09:00:00Z' ("),
        ("garbage", "not an ISO date or date-time: 'garbage'"),
        ("9999-12-31T23:00:00-05:00", "'9999-12-31T23:00:00-05:00' is past the dates"),
    ],
)
def test_an_as_of_that_is_no_date_exits_2_naming_the_option(as_of, error):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError) as caught:
        call_command("review", str(SAMPLES / "lite.json"), "--as-of", as_of)
    assert caught.value.returncode == 2  # bad input, never read as request_changes (1)
    assert str(caught.value).startswith(f"--as-of: {error}")
