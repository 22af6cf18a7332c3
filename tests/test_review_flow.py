"""The review path through the database: submit, specialists, coordinator (tasks eager)."""

import pytest

from reviews import runner
from reviews.ingest import UploadedFile
from reviews.models import AgentRun, Batch, BatchFile, Finding, ReviewRun
from reviews.submit import submit
from reviews.tasks import start_review
from tests.factories import json_upload, upload

pytestmark = pytest.mark.django_db


def run_eagerly(files):
    submission = submit(files, dispatch=False)
    start_review.apply(kwargs={"run_id": submission.run.pk})
    submission.run.refresh_from_db()
    return submission.run


def test_seed_example_is_reviewed_to_a_verdict(postgres):
    run = run_eagerly([upload("seed-example.json")])
    assert run.status == ReviewRun.Status.DONE
    assert run.tier == "trivial"
    assert not run.degraded
    kinds = set(run.findings.values_list("kind", flat=True))
    assert {"company_same_domain", "contact_same_email"} <= kinds
    assert run.verdict.decision == "approve_with_comments"
    assert set(run.agents.values_list("status", flat=True)) == {"done"}
    assert set(run.agents.values_list("model", flat=True)) == {"rules"}


def test_upload_is_stored_byte_for_byte_before_parsing():
    data = b'{"companies": [], "contacts": "oops"'  # not even JSON
    submission = submit([UploadedFile("broken.json", data)])
    assert not submission.accepted
    batch = Batch.objects.get(pk=submission.batch.pk)
    assert batch.status == Batch.Status.REJECTED
    assert batch.errors and "JSON" in batch.errors[0]
    assert bytes(BatchFile.objects.get(batch=batch).data) == data


def test_rejected_batch_lists_every_error_with_record_and_field():
    batch = {
        "companies": [{"name": "no id"}, {"id": "co_1"}, {"id": "co_1"}],
        "contacts": [],
        "deals": [],
    }
    submission = submit([json_upload(batch)])
    assert not submission.accepted
    assert any("companies[0].id" in e for e in submission.errors)
    assert any("companies[2].id" in e for e in submission.errors)
    assert ReviewRun.objects.count() == 0


def test_redelivered_tasks_write_no_duplicate_findings(postgres):
    run = run_eagerly([upload("seed-example.json")])
    before = Finding.objects.filter(run=run).count()
    assert before > 0
    for agent in ("dedup", "attribution", "pipeline", "freshness"):
        runner.run_specialist(run.pk, agent)  # a redelivered specialist task
    ReviewRun.objects.filter(pk=run.pk).update(status=ReviewRun.Status.RUNNING)
    runner.coordinate(run.pk)  # a redelivered coordinator
    assert Finding.objects.filter(run=run).count() == before
    assert ReviewRun.objects.get(pk=run.pk).status == ReviewRun.Status.DONE


def test_a_failing_specialist_degrades_the_run_but_the_coordinator_finishes(settings):
    # A real failure inside the freshness detector: its threshold setting is gone.
    rules = dict(settings.REVIEW_RULES)
    del rules["STALE_ENRICHMENT_DAYS"]
    settings.REVIEW_RULES = rules
    run = run_eagerly([upload("seed-example.json")])
    assert run.status == ReviewRun.Status.DONE
    assert run.degraded
    freshness = run.agents.get(agent="freshness")
    assert freshness.status == AgentRun.Status.FAILED
    assert "STALE_ENRICHMENT_DAYS" in freshness.error
    assert "Degraded: the freshness review failed" in run.verdict.summary
    assert run.findings.filter(category="dedup").exists()


def test_a_specialist_that_never_reported_counts_as_failed():
    submission = submit([upload("seed-example.json")], dispatch=False)
    run = submission.run
    runner.claim_run(run.pk)
    for agent in ("dedup", "pipeline", "freshness"):  # attribution's task was lost
        runner.run_specialist(run.pk, agent)
    runner.coordinate(run.pk)
    run.refresh_from_db()
    assert run.status == ReviewRun.Status.DONE
    assert run.degraded
    assert run.agents.get(agent="attribution").status == AgentRun.Status.FAILED
