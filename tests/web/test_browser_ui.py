"""What a newcomer tripped on, checked in a real Chromium: finding badges beside (not
under) their titles, one expand word, folded file names, the admin's money in view with
its currency and one date format, webhook triggers and bodies readable, styled token
buttons. Screenshots: docs/screenshots/ with UPDATE_SCREENSHOTS=1."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Page, expect

from alerts.models import WebhookDelivery, WebhookSubscription
from reviews.engine.ingest import UploadedFile
from reviews.models import Dataset
from tests.services import ROOT
from tests.uploads import json_upload
from tests.web.conftest import reviewed
from tests.web.test_browser import browser, log_in, page, screenshot  # noqa: F401 (fixtures)
from tests.web.test_browser_admin import admin_page, overflow  # noqa: F401 (fixture)

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

HUBSPOT = ROOT / "samples" / "hubspot"
DATE = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$")


def csv_export() -> list[UploadedFile]:
    names = ("companies", "contacts", "deals")
    return [
        UploadedFile(
            name=f"hubspot-crm-exports-all-{n}-2026-08-01.csv",
            data=(HUBSPOT / f"{n}.csv").read_bytes(),
        )
        for n in names
    ]


def in_dataset(run, name: str = "acme-hubspot"):
    run.batch.dataset = Dataset.objects.get_or_create(name=name)[0]
    run.batch.save(update_fields=["dataset"])
    return run


def test_run_page_badges_sit_beside_titles_and_expand_reads_as_show(page):  # noqa: F811
    full = json.loads((ROOT / "samples" / "full.json").read_text())
    run = reviewed([json_upload({**full, "dataset": "acme-hubspot"}, "full.json")])
    csv_run = reviewed(csv_export())
    log_in(page)

    page.goto(f"/runs/{csv_run.pk}/")
    expect(page.locator("#run-title")).to_have_text(
        "hubspot-crm-exports-all-{companies,contacts,deals}-2026-08-01.csv"
    )

    page.goto(f"/runs/{run.pk}/")
    links = page.locator("#kind-groups td a")
    assert links.count() >= 1
    assert set(links.all_inner_texts()) <= {"show findings", "hide findings"}
    findings = page.locator("details.finding")
    assert findings.count() >= 3
    for i in range(findings.count()):
        summary = findings.nth(i).locator("summary")
        badges = summary.locator(".f-badges").bounding_box()
        title = summary.locator(".f-title").bounding_box()
        assert badges["x"] + badges["width"] <= title["x"] + 0.5, (i, badges, title)
        for badge in summary.locator(".f-badges .badge").all():
            box = badge.bounding_box()
            assert box["x"] + box["width"] <= title["x"] + 0.5, (i, box, title)
    findings.first.locator("summary").click()
    screenshot(page, "run-findings.png")


def test_admin_money_dates_webhooks_and_token_buttons(admin_page):  # noqa: F811
    run = in_dataset(
        reviewed([UploadedFile("full.json", (ROOT / "samples/full.json").read_bytes())])
    )
    subscription = WebhookSubscription.objects.create(
        dataset=run.batch.dataset,
        url="https://hooks.example.com/revreview",
        secret="whsec_x",
        triggers=["request_changes", "degraded"],
    )
    body = json.dumps({"summary": "A long summary " * 80, "run": {"id": run.pk}})
    delivery = WebhookDelivery.objects.create(
        subscription=subscription, run=run, triggers=["request_changes"], body=body
    )

    admin_page.goto("/admin/reviews/finding/")
    assert max(overflow(admin_page).values()) <= 0
    amount = admin_page.locator("#result_list td.field-amount", has_text="$").first
    expect(amount).to_have_text(re.compile(r"^\$[\d,]+(\.\d\d)?$"))
    box = amount.bounding_box()
    assert box["x"] + box["width"] <= admin_page.viewport_size["width"]
    screenshot(admin_page, "admin-findings.png")

    admin_page.goto("/admin/reviews/batch/")
    created = admin_page.locator("#result_list td.field-created_at").first.inner_text()
    assert DATE.match(created), created
    admin_page.goto("/admin/reviews/reviewrun/")
    created = admin_page.locator("#result_list td.field-created").first.inner_text()
    assert DATE.match(created), created

    admin_page.goto("/admin/alerts/webhooksubscription/")
    triggers = admin_page.locator("#result_list td.field-trigger_list").first
    expect(triggers).to_have_text("Request Changes, Degraded")
    admin_page.goto(f"/admin/alerts/webhookdelivery/{delivery.pk}/change/")
    expect(admin_page.locator(".field-trigger_list")).to_contain_text("Request Changes")
    shown = admin_page.locator("pre.delivery-body")
    expect(shown).to_contain_text('"summary"')
    box = shown.bounding_box()
    assert box["x"] + box["width"] <= admin_page.viewport_size["width"]
    assert max(overflow_page(admin_page), 0) == 0

    admin_page.goto("/settings/tokens/")
    admin_page.fill("input[name=name]", "nightly export")
    admin_page.click("#create-token")
    for button in (admin_page.locator("#create-token"), admin_page.locator("text=Revoke")):
        radius = button.evaluate("e => getComputedStyle(e).borderRadius")
        assert radius == "6px", radius  # .btn, not the browser's default button
    screenshot(admin_page, "tokens.png")


def overflow_page(tab: Page) -> int:
    return tab.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
