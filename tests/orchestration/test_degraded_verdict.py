"""Record ids are text, and a degraded run is never approved (issue 40): a 5,000-digit
Record ID is reviewed like any other id, and a specialist that fails leaves a run whose
verdict is at best approve_with_comments, through the real submit and review path."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from reviews.engine.ingest import UploadedFile
from reviews.models import AgentRun, ReviewRun
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run import runner
from reviews.orchestration.run.tasks import start_review
from tests.uploads import json_upload

pytestmark = pytest.mark.django_db

AS_OF = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)
HUGE_ID = "9" * 5000  # past Python's 4,300-digit limit for int()
COMPANIES_CSV = "Record ID,Company name,Company Domain Name\n9001,Harbor,harbor.example\n"


def reviewed(files: list[UploadedFile], **options) -> ReviewRun:
    submission = submit(files, dispatch=False, no_cache=True, **options)
    assert submission.accepted, submission.errors
    start_review.apply(kwargs={"run_id": submission.run.pk})
    submission.run.refresh_from_db()
    return submission.run


def deals_csv(*ids: str) -> bytes:
    rows = "".join(
        f"{rid},Harbor renewal,42000,Presentation Scheduled,2026-09-30,9001\n" for rid in ids
    )
    header = "Record ID,Deal Name,Amount,Deal Stage,Close Date,Associated Company IDs\n"
    return (header + rows).encode()


def test_a_5000_digit_record_id_is_reviewed_without_degrading_the_run():
    run = reviewed(
        [
            UploadedFile("companies.csv", COMPANIES_CSV.encode()),
            UploadedFile("deals.csv", deals_csv(HUGE_ID, "5001")),
        ],
        as_of=AS_OF,
    )

    assert (run.status, run.degraded) == (ReviewRun.Status.DONE, False)
    assert set(run.agents.values_list("status", flat=True)) == {AgentRun.Status.DONE}
    duplicate = run.findings.get(kind="deal_entered_twice")
    assert sorted(duplicate.record_ids) == sorted([HUGE_ID, "5001"])
    # The lowest id survives: 5001 has four digits, the other 5,000.
    assert duplicate.suggested_fix.startswith(f"Keep 5001 and delete {HUGE_ID}")
    assert run.verdict.decision == "request_changes"


CLEAN = {
    "exportedAt": "2026-08-01T09:00:00Z",
    "companies": [
        {"id": "co_1", "name": "Harbor", "domain": "harbor.example", "enrichedAt": "2026-07-05"}
    ],
    "contacts": [],
    "deals": [],
}


def corrupt_freshness_rule(settings) -> None:
    """A real failure inside the freshness detector: its threshold is text."""
    rules = dataclasses.replace(settings.REVIEW_RULES)
    object.__setattr__(rules, "stale_enrichment_days", "180")  # bypasses the validation
    settings.REVIEW_RULES = rules


def test_a_clean_batch_is_approved_when_every_specialist_ran():
    run = reviewed([json_upload(CLEAN)])

    assert (run.degraded, run.findings.count()) == (False, 0)
    assert run.verdict.decision == "approve"


def test_a_detector_that_raises_degrades_the_run_and_it_is_not_approved(settings):
    corrupt_freshness_rule(settings)

    run = reviewed([json_upload(CLEAN)])

    assert (run.status, run.degraded) == (ReviewRun.Status.DONE, True)
    assert run.agents.get(agent="freshness").status == AgentRun.Status.FAILED
    assert run.findings.count() == 0  # nothing found by the others: unknown, not clean
    assert run.verdict.decision == "approve_with_comments"
    assert "Degraded: the freshness review failed" in run.verdict.summary


def test_a_failure_after_the_detector_degrades_the_run_too(monkeypatch):
    def broken(findings, parsed):
        raise ArithmeticError("pricing broke")

    # Stands in for any failure of the specialist's own work once its detector returned.
    monkeypatch.setattr(runner, "price_findings", broken)

    run = reviewed([json_upload(CLEAN)])

    assert (run.status, run.degraded) == (ReviewRun.Status.DONE, True)
    assert set(run.agents.filter(agent__in=runner.NAMES).values_list("status", flat=True)) == {
        AgentRun.Status.FAILED
    }
    assert "ArithmeticError: pricing broke" in run.agents.get(agent="dedup").error
    assert run.verdict.decision == "approve_with_comments"


def test_a_degraded_sync_whose_scope_counts_nothing_is_not_approved(settings):
    # A dataset counts only new problems (the default scope). The second sync has the
    # first one's problem, still open, and its freshness review fails: nothing new was
    # found, but what the failed review would have found is unknown.
    first = {
        **CLEAN,
        "dataset": "harbor-crm",
        "deals": [
            {"id": "dl_1", "name": "Harbor renewal", "amount": 42000,
             "stage": "presentationscheduled", "closeDate": "2026-07-01", "companyId": "co_1"}
        ],
    }  # fmt: skip
    run1 = reviewed([json_upload(first)])
    assert (run1.degraded, run1.verdict.decision) == (False, "approve_with_comments")

    corrupt_freshness_rule(settings)
    run2 = reviewed([json_upload({**first, "exportedAt": "2026-08-02T09:00:00Z"})])

    assert run2.baseline_run_id == run1.pk
    assert run2.degraded
    assert set(run2.findings.values_list("kind", flat=True)) == {"open_past_close_date"}
    assert run2.verdict.decision == "approve_with_comments"
