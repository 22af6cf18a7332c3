"""A verdict that never looks safer than the data (docs/history.md, Standing problems),
in a real headless Chromium against a live server, a real Celery worker and a webhook
receiver on loopback: the second sync of a dataset adds no problem, so its verdict is
`approve`, but a $410,000 critical of the first sync is still open. The banner is not
green and says what is open; the runs list, the dataset page and the webhook say it too."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from playwright.sync_api import expect

from alerts.models import WebhookSubscription
from reviews.models import Dataset, ReviewRun
from tests.alerts.receiver import Receiver
from tests.web.test_browser import browser, log_in, page, screenshot  # noqa: F401 (fixtures)
from tests.web.test_browser_history import upload_sync

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

GREEN_SOFT = "rgb(218, 251, 225)"  # --green-soft: a plain approving banner


@pytest.fixture(autouse=True)
def loopback_receiver_allowed(settings, monkeypatch):
    """The receiver listens on 127.0.0.1: allow-listed as an operator lists an internal
    receiver, for this process and the worker started after it (tests/alerts/conftest.py)."""
    settings.WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    monkeypatch.setenv("WEBHOOK_ALLOWED_HOSTS", "127.0.0.1")


def sync(tmp_path: Path, number: int) -> Path:
    """Both syncs: Contoso's $410,000 expansion entered twice (critical). Sync 1 also has
    a deal in an unknown stage (a warning), fixed in sync 2: nothing new in sync 2."""
    deals = [
        {"id": "30117000301", "name": "Contoso expansion", "amount": 410000,
         "stage": "appointmentscheduled", "companyId": "30117000100",
         "closeDate": "2026-12-01"},
        {"id": "30117000302", "name": "Contoso expansion", "amount": 410000,
         "stage": "appointmentscheduled", "companyId": "30117000100",
         "closeDate": "2026-12-01"},
        {"id": "30117000303", "name": "Fabrikam pilot", "amount": 900,
         "stage": "onhold" if number == 1 else "appointmentscheduled",
         "companyId": "30117000101", "closeDate": "2026-11-01"},
    ]  # fmt: skip
    batch = {
        "id": f"contoso-sync-{number}",
        "exportedAt": f"2026-08-0{number}T09:00:00Z",
        "companies": [
            {"id": "30117000100", "name": "Contoso", "domain": "contoso.example"},
            {"id": "30117000101", "name": "Fabrikam", "domain": "fabrikam.example"},
        ],
        "contacts": [],
        "deals": deals,
    }
    path = tmp_path / f"contoso-sync-{number}.json"
    path.write_text(json.dumps(batch))
    return path


def test_an_approving_sync_with_an_old_critical_open_is_not_green(page, worker, tmp_path):  # noqa: F811
    dataset = Dataset.objects.create(name="acme-hubspot")
    with Receiver() as receiver:
        WebhookSubscription.objects.create(
            dataset=dataset,
            url=receiver.url,
            secret="whsec_standing",
            triggers=["approve", "approve_with_comments", "request_changes"],
        )
        log_in(page)
        upload_sync(page, sync(tmp_path, 1))
        expect(page.locator("#verdict")).to_have_attribute("data-verdict", "request_changes")
        first = ReviewRun.objects.get()
        upload_sync(page, sync(tmp_path, 2))
        second = ReviewRun.objects.exclude(pk=first.pk).get()
        requests = receiver.wait_for(2)

    verdict = page.locator("#verdict")
    expect(verdict).to_have_attribute("data-verdict", "approve")
    expect(verdict).to_have_attribute("data-state", "open_critical")
    expect(verdict.locator("h2")).to_contain_text("Approved: no new problems")
    # The banner's money is said once, in the summary (docs/output.md#money-at-risk).
    expect(page.locator("#standing")).to_have_text(f"1 critical still open since run #{first.pk}.")
    background = verdict.evaluate("e => getComputedStyle(e).backgroundColor")
    assert background != GREEN_SOFT
    # "Most urgent" still names the open critical: nothing new decided this verdict.
    expect(verdict).to_contain_text('Deal "Contoso expansion" (30117000301) entered 2 times')
    screenshot(page, "run-standing.png")

    payloads = {json.loads(r.body)["run"]["id"]: json.loads(r.body) for r in requests}
    payload = payloads[second.pk]
    assert (payload["run"]["verdict"], payload["state"]) == ("approve", "open_critical")
    standing = payload["standing"]
    assert (standing["critical"], standing["warning"], standing["currency"]) == (1, 0, "USD")
    assert Decimal(standing["amount"]) == 410000
    assert standing["since_run"] == first.pk
    assert payload["batch"] == {"id": second.batch_id, "external_id": "contoso-sync-2"}
    assert payloads[first.pk]["standing"]["warning"] == 1  # the stage, fixed since

    page.goto("/runs/")
    row = page.locator("tr", has=page.locator(f'a[href="/runs/{second.pk}/"]')).first
    expect(row.locator(".standing-line")).to_have_text(
        f"1 critical still open since run #{first.pk}: $410,000."
    )
    badge = row.locator(".badge.v-approve")
    assert badge.evaluate("e => getComputedStyle(e).backgroundColor") != GREEN_SOFT

    page.click(f'a[href^="/datasets/{dataset.name}/"] >> nth=0')  # ?workspace= follows
    syncs = page.locator("#syncs tbody tr")
    expect(syncs).to_have_count(2)
    expect(syncs.first).to_have_attribute("data-sync", "2")
    expect(syncs.first.locator(".standing-line")).to_contain_text("1 critical still open")
    badge = syncs.first.locator(".badge.v-approve")
    assert badge.evaluate("e => getComputedStyle(e).backgroundColor") != GREEN_SOFT
    expect(syncs.last).to_have_attribute("data-sync", "1")
    expect(page.locator("#chart-first")).to_contain_text("sync #1 · 2026-08-01 09:00")
    expect(page.locator("#chart-last")).to_contain_text("sync #2 · 2026-08-02 09:00")
    expect(syncs.first.locator("[data-uploaded]")).not_to_be_empty()
    screenshot(page, "dataset-standing.png")
