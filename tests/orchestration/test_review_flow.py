"""The review path through the database: submit, specialists, coordinator (tasks eager)."""

import dataclasses
import json

import pytest
from django.utils import timezone

from reviews import models
from reviews.engine.ingest import UploadedFile
from reviews.models import AgentRun, Batch, BatchFile, Finding, ReviewRun
from reviews.orchestration.intake.serve import ServeRefused, rerun, reuse_run
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run import coordination, runner
from reviews.orchestration.run.tasks import start_review
from reviews.orchestration.serving import decide as serving
from reviews.orchestration.store.blob_store import file_bytes
from reviews.orchestration.store.parsed import load_parsed
from tests.uploads import json_upload, upload

pytestmark = pytest.mark.django_db

IP = ["ip:203.0.113.7"]  # a request's rate keys (ledger.ratelimit.rate_keys)


def run_eagerly(files, **options):
    submission = submit(files, dispatch=False, **options)
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
    assert file_bytes(BatchFile.objects.get(batch=batch)) == data


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


def test_a_rejection_is_logged_with_its_count_of_problems(caplog):
    batch = {"companies": [{"name": "no id"}], "contacts": [], "deals": []}
    with caplog.at_level("INFO", logger="reviews.orchestration.intake.submit"):
        submission = submit([json_upload(batch)])
    assert f"batch {submission.batch.pk} rejected; problems: 1" in caplog.messages


def test_redelivered_tasks_write_no_duplicate_findings(postgres):
    run = run_eagerly([upload("seed-example.json")])
    before = Finding.objects.filter(run=run).count()
    assert before > 0
    for agent in ("dedup", "attribution", "pipeline", "freshness"):
        runner.run_specialist(run.pk, agent)  # a redelivered specialist task
    coordination.coordinate(run.pk)  # a redelivered coordinator
    assert Finding.objects.filter(run=run).count() == before
    assert ReviewRun.objects.get(pk=run.pk).status == ReviewRun.Status.DONE


def test_a_failing_specialist_degrades_the_run_but_the_coordinator_finishes(settings):
    # A real failure inside the freshness detector: its threshold is corrupt.
    rules = dataclasses.replace(settings.REVIEW_RULES)
    object.__setattr__(rules, "stale_enrichment_days", "180")  # bypasses the validation
    settings.REVIEW_RULES = rules
    batch = json.loads(upload("seed-example.json").data)
    batch["companies"][0]["enrichedAt"] = "2026-01-05"  # a date for the threshold to judge
    run = run_eagerly([json_upload(batch)])
    assert run.status == ReviewRun.Status.DONE
    assert run.degraded
    freshness = run.agents.get(agent="freshness")
    assert freshness.status == AgentRun.Status.FAILED
    assert "TypeError" in freshness.error
    assert "Degraded: the freshness review failed" in run.verdict.summary
    assert run.findings.filter(category="dedup").exists()


# --- how a request is served (orchestration.serving, wired in orchestration.submit) ---


def findings_of(run: ReviewRun) -> list[tuple]:
    return list(
        models.findings_of(run)
        .order_by("position")
        .values_list("position", "kind", "severity", "title", "record_ids", "source")
    )


def test_accepted_batch_keeps_its_content_key_and_fresh_run_its_fingerprint(postgres):
    run = run_eagerly([upload("seed-example.json")])
    assert run.batch.content_key == serving.content_key(load_parsed(run.batch))
    assert (run.mode, run.config_fingerprint) == ("fresh", serving.config_fingerprint())
    assert run.reused_run is None


def test_cached_run_serves_the_review_and_dispatches_nothing(
    postgres, django_user_model, django_capture_on_commit_callbacks
):
    first = run_eagerly([upload("seed-example.json")])
    boss = django_user_model.objects.create_user("boss", password="x" * 12)
    first.verdict.overridden_by, first.verdict.overridden_at = boss, timezone.now()
    first.verdict.override_reason = "ship it"
    first.verdict.save()
    with django_capture_on_commit_callbacks() as dispatched:
        run = submit([upload("seed-example.json")]).run
    assert dispatched == []
    assert (run.mode, run.status, run.reused_run_id, run.reason) == ("cached", "done", first.pk, "")
    assert (run.tier, run.specialists, run.degraded) == (first.tier, first.specialists, False)
    assert run.batch_id != first.batch_id
    assert run.started_at and run.finished_at
    assert findings_of(run) == findings_of(first) != []
    # Referenced, not copied: the same rows, and none of its own.
    assert set(models.findings_of(run)) == set(first.findings.all())
    assert not run.findings.exists()
    assert (run.verdict.decision, run.verdict.summary, run.verdict.pipeline_at_risk) == (
        first.verdict.decision, first.verdict.summary, first.verdict.pipeline_at_risk,
    )  # fmt: skip
    assert not run.verdict.is_overridden  # the override was about the other run
    assert sorted(run.agents.values_list("agent", flat=True)) == sorted(
        first.agents.values_list("agent", flat=True)
    )
    assert set(run.agents.values_list("status", "model")) == {("done", "cached")}
    assert not serving.models_allowed(run)


def test_a_cached_run_is_never_itself_reused(postgres):
    first = run_eagerly([upload("seed-example.json")])
    submit([upload("seed-example.json")])
    third = submit([upload("seed-example.json")]).run
    assert (third.mode, third.reused_run_id) == ("cached", first.pk)


def test_rerun_bypasses_the_cache(postgres, django_capture_on_commit_callbacks):
    first = run_eagerly([upload("seed-example.json")])
    with django_capture_on_commit_callbacks(execute=True):
        run = rerun(first)
    run.refresh_from_db()
    assert (run.mode, run.status, run.reused_run) == ("fresh", "done", None)
    assert findings_of(run) == findings_of(first)


def test_rate_limit_serves_failback_then_refuses_with_retry_after(postgres, redis_url, settings):
    settings.RATE_LIMIT_PER_HOUR = 1
    first = run_eagerly([upload("seed-example.json")], rate_keys=IP)
    assert (first.mode, first.status) == ("fresh", "done")

    # The re-run button skips the cache but not the limit: 2 of 1 is served by failback.
    second = rerun(first, rate_keys=IP)
    assert (second.mode, second.reused_run_id) == ("failback", first.pk)
    assert second.reason == "rate limit exceeded: 2 requests this hour, limit 1"
    assert findings_of(second) == findings_of(first)

    with pytest.raises(ServeRefused) as refused:  # 3 of 1: far over
        submit([upload("seed-example.json")], rate_keys=IP)
    error = refused.value
    assert error.reason == "rate limit: 3 requests this hour, limit 1"
    assert 0 < error.retry_after <= 3600
    assert error.batch.status == Batch.Status.ACCEPTED  # kept, but not reviewed
    assert not error.batch.runs.exists()
    with pytest.raises(ServeRefused):
        rerun(first, rate_keys=IP)
    # The CLI has no address: never limited.
    assert submit([upload("seed-example.json")]).run.mode == "cached"


def test_failback_without_a_good_run_is_reviewed_by_the_detectors(postgres, redis_url, settings):
    settings.RATE_LIMIT_PER_HOUR = 1
    submit([upload("seed-example.json")], rate_keys=IP, dispatch=False)  # queued, not good yet
    run = submit([upload("seed-example.json")], rate_keys=IP, dispatch=False).run
    assert (run.mode, run.status, run.reused_run) == ("failback", "queued", None)
    assert run.reason.startswith("rate limit exceeded")
    assert run.config_fingerprint == serving.config_fingerprint()
    assert not serving.models_allowed(run)
    start_review.apply(kwargs={"run_id": run.pk})
    run.refresh_from_db()
    assert (run.mode, run.status) == ("failback", "done")
    assert {"company_same_domain", "contact_same_email"} <= set(
        run.findings.values_list("kind", flat=True)
    )
    # A failback run is not served from the cache to anyone.
    assert serving.reusable_run(run.batch.content_key, run.config_fingerprint) is None


def test_reuse_of_a_run_deleted_since_the_decision_makes_no_run(postgres):
    batch = submit([upload("seed-example.json")], dispatch=False).batch
    decision = serving.ServeDecision(ReviewRun.Mode.CACHED, reuse_run_id=10**9)
    assert reuse_run(batch, decision) is None
    assert batch.runs.count() == 1


def test_a_redelivered_start_resumes_a_run_whose_specialists_never_started():
    submission = submit([upload("seed-example.json")], dispatch=False)
    run = submission.run
    assert runner.claim_run(run.pk)  # the first delivery claimed it, then died
    start_review.apply(kwargs={"run_id": run.pk})  # the redelivery
    run.refresh_from_db()
    assert run.status == ReviewRun.Status.DONE
    assert set(run.agents.values_list("status", flat=True)) == {AgentRun.Status.DONE}


def test_a_started_run_is_not_started_twice():
    run = run_eagerly([upload("seed-example.json")])
    assert not runner.claim_run(run.pk)


def test_a_redelivered_coordinator_does_not_run_again():
    submission = submit([upload("seed-example.json")], dispatch=False)
    run = submission.run
    runner.claim_run(run.pk)
    AgentRun.objects.filter(run=run, agent=AgentRun.COORDINATOR).update(
        status=AgentRun.Status.RUNNING
    )  # the first coordinator is at work
    coordination.coordinate(run.pk)
    run.refresh_from_db()
    assert run.status == ReviewRun.Status.RUNNING
    assert not Finding.objects.filter(run=run).exists()


def test_an_upload_sent_to_the_workers_keeps_no_parsed_batch_in_the_web_process(
    django_capture_on_commit_callbacks,
):
    from reviews.orchestration.store import parsed as parsed_module

    parsed_module.keep_parsed(0, None)  # whatever an earlier review left
    with django_capture_on_commit_callbacks(execute=False):
        submit([upload("seed-example.json")], no_cache=True)
    assert parsed_module._parsed == {(0, ""): None}  # nothing new: the workers parse it


def test_the_rules_coordinator_lets_go_of_the_runs_parsed_batch_only(monkeypatch):
    from reviews.orchestration.store import parsed as parsed_module

    coordinated = []
    real = coordination._coordinate
    monkeypatch.setattr(
        coordination,
        "_coordinate",
        lambda run: coordinated.append(dict(parsed_module._parsed)) or real(run),
    )
    run = run_eagerly([upload("seed-example.json")], no_cache=True)

    assert run.status == ReviewRun.Status.DONE
    assert [list(kept) for kept in coordinated] == [[(run.batch_id, run.batch.content_key)]]
    assert parsed_module._parsed == {}  # the specialists' parse went before the findings
    parsed_module.keep_parsed(run.batch_id + 1, None)
    parsed_module.forget_parsed(run.batch_id)  # another batch's parse stays
    assert list(parsed_module._parsed) == [(run.batch_id + 1, "")]
