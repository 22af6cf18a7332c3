"""The fix plan in a real headless Chromium: the run page's downloads, and a staff
member applying a merge after the dry run, against the loopback HubSpot stand-in."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from reviews.models import AppliedMerge
from tests.connectors.merge_standin import HubSpotStandIn
from tests.connectors.test_merges import TOKEN, connect_acme, sync
from tests.engine.ingest.hubspot_exports import AS_OF, BATCH
from tests.web.test_browser import browser, log_in, page, screenshot  # noqa: F401

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_staff_apply_one_merge_after_the_dry_run(page, settings, postgres, redis_url):  # noqa: F811
    run = sync(BATCH, AS_OF)
    with HubSpotStandIn(BATCH, token=TOKEN) as hubspot:
        connect_acme(settings, hubspot.url)
        log_in(page)
        page.goto(f"/runs/{run.pk}/")
        expect(page.locator("#merge-plan-csv")).to_have_attribute(
            "href", f"/runs/{run.pk}/merges.csv"
        )
        expect(page.locator("#tasks-csv")).to_have_attribute("href", f"/runs/{run.pk}/tasks.csv")
        with page.expect_download() as download:
            page.click("#tasks-csv")
        assert download.value.suggested_filename == f"run-{run.pk}-tasks.csv"
        page.click("#apply-merges")
        expect(page).to_have_url(re.compile(rf"/runs/{run.pk}/merges/apply/$"))
        rows = page.locator("#merge-steps tbody tr")
        expect(rows).to_have_count(3)
        expect(page.locator('tr[data-outcome="would merge"]')).to_have_count(3)
        screenshot(page, "apply-merges.png")
        page.check('tr[data-merged="5002"] input[name=fingerprint]')
        page.check("input[name=confirm]")
        page.click("text=Merge the ticked records in HubSpot")
        expect(page.locator('tr[data-merged="5002"]')).to_have_attribute("data-outcome", "merged")
        assert hubspot.merged == [("deals", "5001", "5002")]
    assert AppliedMerge.objects.get().requested_by.username == "alex"
