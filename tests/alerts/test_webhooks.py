"""Webhooks to a loopback receiver: signed deliveries for the verdicts a dataset's
subscription watches, none for others, retries with growing delays, every attempt kept."""

from __future__ import annotations

import json
import time

import pytest

from alerts import signing
from alerts.models import WebhookAttempt, WebhookDelivery, WebhookSubscription
from reviews.engine.ingest import UploadedFile
from reviews.models import Dataset, ReviewRun
from reviews.orchestration.intake.serve import dispatch_review
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.runner import fail_run
from reviews.orchestration.run.tasks import start_review
from tests.alerts.receiver import Receiver
from tests.services import ROOT

pytestmark = [pytest.mark.django_db(transaction=True)]

SECRET = "whsec_test-secret"
SAMPLES = ROOT / "samples"


def sample(name: str) -> UploadedFile:
    return UploadedFile(name=name, data=(SAMPLES / name).read_bytes())


@pytest.fixture
def dataset():
    return Dataset.objects.create(name="acme-hubspot")


def subscribe(dataset, url, **fields) -> WebhookSubscription:
    return WebhookSubscription.objects.create(dataset=dataset, url=url, secret=SECRET, **fields)


def review_in_process(dataset, file) -> ReviewRun:
    """Submit into the dataset and review it here (tasks are eager in tests)."""
    submission = submit([file], dispatch=False, no_cache=True)
    submission.batch.dataset = dataset
    submission.batch.save(update_fields=["dataset"])
    start_review.apply(kwargs={"run_id": submission.run.pk})
    submission.run.refresh_from_db()
    return submission.run


def test_a_request_changes_run_is_delivered_signed(dataset, redis_url):
    with Receiver() as receiver:
        subscribe(dataset, receiver.url)
        run = review_in_process(dataset, sample("full.json"))
        assert run.verdict.decision == "request_changes"

        (request,) = receiver.wait_for(1)
    header = request.headers[signing.HEADER]
    assert signing.verify(SECRET, header, request.body)
    assert not signing.verify("another secret", header, request.body)
    assert not signing.verify(SECRET, header, request.body + b" ")
    # The timestamp is signed: an old delivery replayed later is refused.
    assert not signing.verify(SECRET, header, request.body, now=time.time() + 3600)
    payload = json.loads(request.body)
    assert payload["triggers"] == ["request_changes"]
    assert payload["dataset"] == "acme-hubspot"
    assert payload["run"]["id"] == run.pk
    assert payload["run"]["url"].endswith(f"/runs/{run.pk}/")
    assert payload["counts"]["critical"] >= 1
    assert request.headers["X-Revreview-Event"] == "run.finished"
    delivery = WebhookDelivery.objects.get(run=run)
    assert delivery.status == WebhookDelivery.Status.DELIVERED
    assert request.headers["X-Revreview-Delivery"] == str(delivery.pk)
    (attempt,) = delivery.attempt_log.all()
    assert (attempt.number, attempt.response_code, attempt.ok) == (1, 200, True)


def test_an_approve_run_is_not_delivered_unless_subscribed(dataset, redis_url):
    with Receiver() as receiver:
        subscribe(dataset, receiver.url)  # the default: request_changes only
        run = review_in_process(dataset, sample("clean.json"))
        assert run.verdict.decision == "approve"
        time.sleep(0.5)
        assert receiver.received == []
        assert not WebhookDelivery.objects.exists()

        watcher = subscribe(dataset, receiver.url, triggers=["approve"])
        run = review_in_process(dataset, sample("clean.json"))
        (request,) = receiver.wait_for(1)
    assert json.loads(request.body)["triggers"] == ["approve"]
    assert WebhookDelivery.objects.get().subscription == watcher


def test_a_batch_without_a_dataset_alerts_nobody(dataset, redis_url):
    with Receiver() as receiver:
        subscribe(dataset, receiver.url)
        submission = submit([sample("full.json")], dispatch=False, no_cache=True)
        start_review.apply(kwargs={"run_id": submission.run.pk})
        time.sleep(0.5)
    assert receiver.received == []


def test_the_slack_format_is_a_text_message_with_the_run_link(dataset, redis_url):
    with Receiver() as receiver:
        subscribe(dataset, receiver.url, payload_format="slack")
        run = review_in_process(dataset, sample("full.json"))
        (request,) = receiver.wait_for(1)
    payload = json.loads(request.body)
    assert set(payload) == {"text"}
    assert "*Changes requested*" in payload["text"]
    # What stands in the dataset, right after the verdict (the first sync: all of it,
    # open, not "still open since" this very run).
    assert " critical and 8 warnings open: $" in payload["text"]
    assert f"since run #{run.pk}" not in payload["text"]
    assert "acme-hubspot" in payload["text"]
    assert f"/runs/{run.pk}/|Open run {run.pk}>" in payload["text"]
    assert "critical" in payload["text"]
    assert run.verdict.summary in payload["text"]


def test_slack_syntax_in_a_dataset_name_reaches_slack_escaped(redis_url):
    """`<!channel>` would ping the channel and `<url|label>` show a forged link: the
    name arrives as text, with &, < and > escaped as Slack's mrkdwn asks."""
    named = Dataset.objects.create(
        name="acme <!channel> <https://evil.example/login|Open run 1> & co"
    )
    with Receiver() as receiver:
        subscribe(named, receiver.url, payload_format="slack")
        run = review_in_process(named, sample("full.json"))
        (request,) = receiver.wait_for(1)
    text = json.loads(request.body)["text"]
    assert (
        "on acme &lt;!channel&gt; &lt;https://evil.example/login|Open run 1&gt; &amp; co (run"
        in text
    )
    assert "<!channel>" not in text and "<https://evil" not in text
    # The one link left is ours: to the run.
    assert text.count("<") == 1 and text.endswith(f"/runs/{run.pk}/|Open run {run.pk}>")


def test_slack_text_escapes_every_value_it_shows():
    from alerts.payloads import slack_text

    data = {
        "run": {
            "id": 7,
            "status": "done",
            "verdict": "request_changes",
            "degraded": False,
            "mode": "fresh",
            "url": "https://rr.example/runs/7/?a=<b>|c",
        },
        "counts": {"critical": 1},
        "dataset": "d",
        "summary": "Duplicate contact <@U123> & <!here> in deals.csv <x>",
    }
    text = slack_text(data)
    assert "Duplicate contact &lt;@U123&gt; &amp; &lt;!here&gt; in deals.csv &lt;x&gt;" in text
    assert text.endswith("<https://rr.example/runs/7/?a=%3Cb%3E%7Cc|Open run 7>")


@pytest.fixture
def fast_retries(monkeypatch, settings):
    """Short backoff for this process and for the worker started after it."""
    monkeypatch.setenv("WEBHOOK_RETRY_BASE_SECONDS", "1")
    settings.WEBHOOK_RETRY_BASE_SECONDS = 1


@pytest.mark.integration
def test_a_failing_receiver_is_retried_with_growing_delays(dataset, fast_retries, worker):
    with Receiver(statuses=[500, 500, 200]) as receiver:
        subscribe(dataset, receiver.url)
        submission = submit([sample("full.json")], dispatch=False, no_cache=True)
        submission.batch.dataset = dataset
        submission.batch.save(update_fields=["dataset"])
        dispatch_review(submission.run)  # on commit: to the worker

        requests = receiver.wait_for(3, timeout=90)
        time.sleep(0.5)  # the worker records the third attempt after its answer
    assert len(requests) == 3
    assert len({r.body for r in requests}) == 1  # the same message each time
    first_gap = requests[1].at - requests[0].at
    second_gap = requests[2].at - requests[1].at
    assert 0.9 <= first_gap < second_gap, (first_gap, second_gap)
    assert second_gap >= 1.8
    delivery = WebhookDelivery.objects.get()
    deadline = time.monotonic() + 10
    while delivery.status != WebhookDelivery.Status.DELIVERED and time.monotonic() < deadline:
        time.sleep(0.2)
        delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.Status.DELIVERED
    attempts = list(WebhookAttempt.objects.filter(delivery=delivery))
    assert [(a.number, a.response_code, a.ok) for a in attempts] == [
        (1, 500, False),
        (2, 500, False),
        (3, 200, True),
    ]
    assert attempts[0].excerpt == "receiver is down" and attempts[0].error == ""
    assert all(a.latency_ms >= 0 for a in attempts)


def test_a_failed_run_alerts_who_watches_failures(dataset, redis_url):
    with Receiver() as receiver:
        subscribe(dataset, receiver.url)  # request_changes only: not told
        watcher = subscribe(dataset, receiver.url, triggers=["failed"])
        queued = submit(
            [sample("lite.json")], dispatch=False, no_cache=True, dataset="acme-hubspot"
        )
        fail_run(queued.run.pk, RuntimeError("worker lost"))
        fail_run(queued.run.pk, RuntimeError("and again"))  # no second delivery
        (request,) = receiver.wait_for(1)
        time.sleep(0.5)
        assert len(receiver.received) == 1
    payload = json.loads(request.body)
    assert payload["triggers"] == ["failed"]
    assert payload["run"]["status"] == "failed"
    assert payload["summary"] == "RuntimeError('worker lost')"
    assert WebhookDelivery.objects.get().subscription == watcher
