"""The admin's lists at 1366 px in a real Chromium: every column on screen, nothing
clipped, verdicts as labels."""

from __future__ import annotations

import pytest
from django.utils import timezone
from playwright.sync_api import Page

from reviews.models import Verdict
from tests.uploads import json_upload
from tests.web.conftest import reviewed
from tests.web.test_browser import PASSWORD, browser, screenshot  # noqa: F401 (fixture)

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

LONG_NAME = "acme-hubspot-export-" + "q3-reconciliation-" * 4 + "final.json"


@pytest.fixture
def admin_page(browser, live_server, django_user_model) -> Page:  # noqa: F811
    django_user_model.objects.create_superuser("root", password=PASSWORD)
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto("/admin/login/")
    page.fill("input[name=username]", "root")
    page.fill("input[name=password]", PASSWORD)
    page.click("input[type=submit]")
    yield page
    context.close()


def overflow(page: Page) -> dict:
    """How far the page and the list reach past the window, in CSS pixels."""
    return page.evaluate(
        """() => ({
            page: document.documentElement.scrollWidth - window.innerWidth,
            list: document.querySelector('#result_list').getBoundingClientRect().right
                  - window.innerWidth,
        })"""
    )


def test_run_and_finding_lists_fit_1366_pixels(admin_page):
    batch = {
        "exportedAt": "2026-08-01T09:00:00Z",
        "companies": [
            {
                "id": f"co_{n}",
                "name": "Vertex Robotics International Holdings " * 3,
                "domain": "v.example",
            }
            for n in range(3)
        ],
        "contacts": [],
        "deals": [],
    }
    run = reviewed([json_upload(batch, LONG_NAME)])
    Verdict.objects.filter(run=run).update(
        decision=Verdict.Decision.REQUEST_CHANGES,
        overridden_at=timezone.now(),
        override_reason="quarter close",
    )
    reviewed()

    admin_page.goto("/admin/reviews/reviewrun/")
    screenshot(admin_page, "admin-runs-1366.png")
    assert max(overflow(admin_page).values()) <= 0
    header = admin_page.locator("#result_list thead").inner_text()
    for column in ("VERDICT", "DEGRADED", "CREATED"):
        assert column in header.upper()
    body = admin_page.locator("#result_list tbody").inner_text()
    assert "Approved by break glass (was: Changes requested)" in body
    assert "Approved with comments" in body

    admin_page.goto("/admin/reviews/finding/")
    screenshot(admin_page, "admin-findings-1366.png")
    assert max(overflow(admin_page).values()) <= 0
    title_cells = admin_page.locator("#result_list td.field-short_title")
    assert title_cells.count() >= 1
    clipped = admin_page.evaluate(
        """() => [...document.querySelectorAll('#result_list td')]
            .filter(td => td.scrollWidth > td.clientWidth + 1).length"""
    )
    assert clipped == 0
