"""A real Celery worker process on Redis reviews a batch submitted through the broker."""

import io
import json
import time

import pytest
from django.core.management import call_command

from reviews.models import AgentRun, ReviewRun
from reviews.orchestration.intake.submit import submit
from tests.uploads import DATA, upload

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def wait_until_finished(run: ReviewRun, worker, timeout: float = 90) -> ReviewRun:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.is_finished:
            return run
        if worker.poll() is not None:
            pytest.fail(f"worker exited early:\n{worker.stdout.read()[-4000:]}")
        time.sleep(0.2)
    worker.terminate()
    log = worker.stdout.read()[-4000:]
    pytest.fail(f"run {run.pk} still {run.status} after {timeout}s:\n{log}")


def test_worker_reviews_a_batch_sent_through_the_broker(worker):
    submission = submit([upload("seed-example.json")])  # dispatched on commit
    run = wait_until_finished(submission.run, worker)
    assert run.status == ReviewRun.Status.DONE
    assert not run.degraded
    assert run.verdict.decision == "approve_with_comments"
    kinds = set(run.findings.values_list("kind", flat=True))
    assert {"company_same_domain", "contact_same_email"} <= kinds
    agents = {a.agent: a for a in run.agents.all()}
    assert {a.status for a in agents.values()} == {AgentRun.Status.DONE}
    assert all(a.started_at and a.finished_at for a in agents.values())


def test_cli_worker_flag_sends_the_review_through_the_broker_and_waits(worker):
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command(
            "review",
            str(DATA / "seed-example.json"),
            "--format",
            "json",
            "--worker",
            "--timeout",
            "90",
            stdout=out,
        )
    report = json.loads(out.getvalue())
    assert exit_.value.code == 0
    assert (report["run"]["status"], report["verdict"]) == ("done", "approve_with_comments")
    run = ReviewRun.objects.get(pk=report["run"]["id"])
    # Eager execution is off here (the worker fixture), so only the worker can finish it.
    assert {a.status for a in run.agents.all()} == {AgentRun.Status.DONE}
    assert worker.poll() is None


def test_worker_reads_a_big_upload_then_reviews_it(worker):
    from reviews.orchestration.intake.entry import hand_over
    from reviews.orchestration.intake.submit import store_upload

    batch = store_upload([upload("seed-example.json")], rate_keys=["ip:203.0.113.9"])
    hand_over(batch)  # on commit: at once here
    deadline = time.monotonic() + 60
    while not batch.runs.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    run = wait_until_finished(batch.runs.get(), worker)
    batch.refresh_from_db()
    assert (batch.status, run.status) == ("accepted", ReviewRun.Status.DONE)
    assert run.verdict.decision == "approve_with_comments"
