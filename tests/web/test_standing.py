"""Standing problems everywhere a dataset's verdict is read (docs/history.md): kept on
the run, carried by a cached run, in the run JSON and the readable report, the API's
run, runs list and dataset, the webhook body and its Slack text, the runs list page."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.urls import reverse

from alerts.models import WebhookSubscription
from alerts.payloads import message, slack_text
from reviews.models import ReviewRun
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from reviews.reports.report import run_report, text_report
from tests.uploads import json_upload

pytestmark = pytest.mark.django_db

DATASET = "contoso-hubspot"


def batch(day: int, *, new_warning: bool = False) -> dict:
    """Contoso's $410,000 expansion entered twice (critical) in every sync; sync 2 adds
    nothing new unless asked to (an open deal past its close date: a new warning)."""
    deals = [
        {"id": f"dl_{n}", "name": "Contoso expansion", "amount": 410000,
         "stage": "appointmentscheduled", "companyId": "co_1", "closeDate": "2026-12-01"}
        for n in (1, 2)
    ]  # fmt: skip
    if new_warning:
        deals.append(
            {"id": "dl_3", "name": "Contoso pilot", "amount": 5000,
             "stage": "appointmentscheduled", "companyId": "co_1", "closeDate": "2026-07-01"}
        )  # fmt: skip
    return {
        "id": f"contoso-{day}",
        "exportedAt": f"2026-08-0{day}T09:00:00Z",
        "companies": [{"id": "co_1", "name": "Contoso", "domain": "contoso.example"}],
        "contacts": [],
        "deals": deals,
    }


def sync(data: dict, *, no_cache: bool = True) -> ReviewRun:
    submission = submit(
        [json_upload(data, f"{data['id']}.json")],
        dispatch=False,
        no_cache=no_cache,
        dataset=DATASET,
    )
    if submission.run.status == ReviewRun.Status.QUEUED:
        start_review.apply(kwargs={"run_id": submission.run.pk})
    submission.run.refresh_from_db()
    return submission.run


def test_an_old_critical_stands_beside_an_approve_everywhere(client, django_user_model):
    first = sync(batch(1))
    second = sync(batch(2))
    assert second.verdict.decision == "approve"
    standing = second.standing
    assert (standing["state"], standing["critical"], standing["warning"]) == (
        "open_critical",
        1,
        0,
    )
    assert (Decimal(standing["amount"]), standing["currency"]) == (Decimal(410000), "USD")
    assert standing["since_run"] == first.pk
    assert first.standing["since_run"] == first.pk  # new then: first seen in its own sync
    sentence = f"1 critical still open since run #{first.pk}: $410,000."

    report = run_report(second)
    assert report["standing"] == standing
    assert report["batch"]["id"] == second.batch_id
    assert report["batch"]["external_id"] == "contoso-2"
    assert f"standing: {sentence}" in text_report(report)

    WebhookSubscription.objects.create(
        dataset=second.batch.dataset, url="https://hooks.example.com/x", secret="s"
    )
    body = message(second, ["approve"])
    assert body["state"] == "open_critical"
    assert body["standing"] == {
        "critical": 1,
        "warning": 0,
        "amount": standing["amount"],
        "currency": "USD",
        "since_run": first.pk,
    }
    assert f"*{sentence}*" in slack_text(body)
    json.dumps(body)  # JSON-safe: money as a string

    client.force_login(django_user_model.objects.create_user("ana", password="x" * 12))
    page = client.get(reverse("reviews:runs")).content.decode()
    assert sentence in page
    run_page = client.get(reverse("reviews:run", args=[second.pk])).content.decode()
    assert 'data-state="open_critical"' in run_page
    assert "Approved: no new problems" in run_page


def test_a_cached_run_carries_the_standing_of_the_run_it_serves():
    # A batch without a dataset: the same content under the same configuration.
    runs = []
    for _ in range(2):
        submission = submit([json_upload(batch(1), "solo.json")], dispatch=False)
        if submission.run.status == ReviewRun.Status.QUEUED:
            start_review.apply(kwargs={"run_id": submission.run.pk})
        submission.run.refresh_from_db()
        runs.append(submission.run)
    fresh, cached = runs
    assert (fresh.mode, cached.mode) == (ReviewRun.Mode.FRESH, ReviewRun.Mode.CACHED)
    assert cached.standing == fresh.standing
    assert cached.standing["critical"] == 1


def test_a_new_warning_decides_the_verdict_and_is_named_first():
    first = sync(batch(1))
    second = sync(batch(2, new_warning=True))
    assert second.verdict.decision == "approve_with_comments"
    summary = second.verdict.summary
    assert 'Most urgent: Open deal "Contoso pilot" (dl_3) is' in summary
    assert '(new); most urgent still open: Deal "Contoso expansion" (dl_1)' in summary
    assert (second.standing["critical"], second.standing["warning"]) == (1, 1)
    assert second.standing["since_run"] == first.pk  # the critical's, the most severe
    assert second.standing["amounts"] == {"USD": "415000"}


def test_a_run_without_a_dataset_keeps_the_json_contract():
    submission = submit([json_upload(batch(1), "solo.json")], dispatch=False, no_cache=True)
    start_review.apply(kwargs={"run_id": submission.run.pk})
    submission.run.refresh_from_db()
    report = run_report(submission.run)
    assert "standing" not in report and "suppressed" not in report
    assert submission.run.standing["state"] == "open_critical"  # kept all the same


def test_a_one_off_upload_is_not_still_open_since_its_own_run(client, django_user_model):
    submission = submit([json_upload(batch(1), "solo.json")], dispatch=False, no_cache=True)
    start_review.apply(kwargs={"run_id": submission.run.pk})
    run = submission.run
    client.force_login(django_user_model.objects.create_user("ana", password="x" * 12))
    for url in (reverse("reviews:run", args=[run.pk]), reverse("reviews:runs")):
        page = client.get(url).content.decode()
        assert "still open" not in page and f"since run #{run.pk}" not in page
    # The banner says the money once, in the summary; the runs list on the standing line.
    banner = client.get(reverse("reviews:run", args=[run.pk])).content.decode()
    assert '<p class="standing" id="standing">1 critical open.</p>' in banner
    assert "$410,000 at risk across 1 deal." in banner
    assert "1 critical open: $410,000." in client.get(reverse("reviews:runs")).content.decode()


def test_a_datasets_first_sync_is_open_there_and_still_open_in_the_next(client, django_user_model):
    first = sync(batch(1))
    second = sync(batch(2))
    client.force_login(django_user_model.objects.create_user("ana", password="x" * 12))
    first_page = client.get(reverse("reviews:run", args=[first.pk])).content.decode()
    assert '<p class="standing" id="standing">1 critical open.</p>' in first_page
    assert f"since run #{first.pk}" not in first_page
    assert "standing: 1 critical open: $410,000." in text_report(run_report(first))
    second_page = client.get(reverse("reviews:run", args=[second.pk])).content.decode()
    assert f"1 critical still open since run #{first.pk}." in second_page
    dataset_page = client.get(
        reverse("reviews:dataset", args=[DATASET]), {"workspace": first.batch.workspace_id}
    ).content.decode()
    assert dataset_page.count(f"since run #{first.pk}") == 1  # the second sync's row only
