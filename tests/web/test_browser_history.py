"""Dataset history in a real headless Chromium, against a live server and a real Celery
worker: upload sync 1, dismiss a finding with a reason (htmx, no reload), upload sync 2,
then the New / Open badges, the resolved section, the suppressed finding and the
dataset page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.web.test_browser import RUN_TIMEOUT_MS, browser, log_in, page, screenshot  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def sync(tmp_path: Path, number: int) -> Path:
    """Sync 1: a won deal without a close date, a deal in an unknown stage and two
    companies on one domain. Sync 2 (a day later, records reordered): the close date is
    filled, the stage is still unknown, a negative amount is new."""
    deals = [
        {"id": "dl_1", "name": "Acme renewal", "amount": 1000, "stage": "closedwon",
         "companyId": "co_1"},
        {"id": "dl_3", "name": "Acme pilot", "amount": 400, "stage": "onhold",
         "companyId": "co_1", "closeDate": "2026-10-01"},
    ]  # fmt: skip
    companies = [
        {"id": "co_1", "name": "Acme", "domain": "acme.example"},
        {"id": "co_2", "name": "Acme Europe", "domain": "www.acme.example"},
    ]
    if number == 2:
        deals[0]["closeDate"] = "2026-07-30"
        deals[1]["amount"] = 450
        deals.append(
            {"id": "dl_2", "name": "Acme upsell", "amount": -50, "stage": "qualifiedtobuy",
             "companyId": "co_2", "closeDate": "2026-09-01"}
        )  # fmt: skip
        deals.reverse()
        companies.reverse()
    batch = {
        "exportedAt": f"2026-08-0{number}T09:00:00Z",
        "companies": companies,
        "contacts": [],
        "deals": deals,
    }
    path = tmp_path / f"sync{number}.json"
    path.write_text(json.dumps(batch))
    return path


def upload_sync(tab: Page, path: Path) -> None:
    tab.goto("/upload/")
    tab.set_input_files("input[name=files]", str(path))
    tab.fill("input[name=dataset]", "acme-hubspot")
    tab.click("text=Upload and review")
    expect(tab).to_have_url(re.compile(r"/runs/\d+/$"))
    expect(tab.locator("#verdict[data-verdict]")).to_have_attribute(
        "data-verdict", re.compile(r"."), timeout=RUN_TIMEOUT_MS
    )
    expect(tab.locator("#run-status")).to_have_text("done", timeout=RUN_TIMEOUT_MS)


def test_two_syncs_with_a_dismissal_from_the_browser(page, worker, tmp_path):  # noqa: F811
    log_in(page)
    upload_sync(page, sync(tmp_path, 1))
    expect(page.locator("#verdict")).to_have_attribute("data-verdict", "request_changes")
    expect(page.locator("#resolved")).to_contain_text("The first sync of acme-hubspot")

    # Dismiss the duplicate with a reason: swapped in place, the page is not reloaded.
    page.evaluate("window.notReloaded = true")
    duplicate = page.locator('details.finding[data-kind="company_same_domain"]')
    duplicate.locator("summary").click()
    duplicate.locator("button:has-text('Dismiss')").click()  # no reason: the browser asks
    expect(duplicate.locator(".dismissed")).to_have_count(0)
    duplicate.locator("input[name=reason]").fill("Two subsidiaries, billed apart")
    duplicate.locator("button:has-text('Dismiss')").click()
    dismissed = page.locator('details.finding[data-kind="company_same_domain"] .dismissed')
    expect(dismissed).to_contain_text("Dismissed by alex")
    expect(dismissed).to_contain_text("Two subsidiaries, billed apart")
    assert page.evaluate("window.notReloaded") is True

    upload_sync(page, sync(tmp_path, 2))
    # Scope "new": the open unknown stage is a warning, the new negative amount critical.
    expect(page.locator("#verdict")).to_have_attribute("data-verdict", "request_changes")
    expect(page.locator("#verdict")).to_contain_text("1 new problem; 1 still open; 1 resolved")
    new = page.locator('details.finding[data-status="new"]')
    expect(new).to_have_count(1)
    expect(new.locator(".badge.status-new")).to_have_text("New")
    expect(new).to_have_attribute("data-kind", "negative_amount")
    opened = page.locator('details.finding[data-status="open"]')
    expect(opened.locator(".badge.status-open")).to_have_text("Open")
    expect(opened).to_have_attribute("data-kind", "unknown_stage")
    expect(page.locator("#resolved")).to_contain_text("won_without_close_date")
    expect(page.locator('details.finding[data-kind="company_same_domain"]')).to_have_count(0)
    suppressed = page.locator("#suppressed")
    suppressed.locator("summary").click()
    expect(suppressed).to_contain_text("Two subsidiaries, billed apart")
    expect(suppressed).to_contain_text("company_same_domain")
    screenshot(page, "history-run.png")

    page.click("#status-filter a[data-status='open']")
    expect(page).to_have_url(re.compile(r"\?status=open$"))
    expect(page.locator("details.finding")).to_have_count(1)
    expect(page.locator("details.finding .badge.status-open")).to_have_count(1)

    page.click("#dataset-link")
    expect(page.locator("h1")).to_contain_text("acme-hubspot")
    rows = page.locator("#syncs tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first.locator('[data-count="new"]')).to_have_text("1")
    expect(rows.first.locator('[data-count="resolved"]')).to_have_text("1")
    expect(rows.first.locator('[data-count="suppressed"]')).to_have_text("1")
    expect(page.locator("#trend polyline")).to_have_count(3)
    expect(page.locator('#kind-shares tr[data-kind="company_same_domain"]')).to_contain_text("100%")
    screenshot(page, "dataset.png")
