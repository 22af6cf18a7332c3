"""The fix plan in a real headless Chromium: from the run page to the fix plan page (its
owners, a record's link to HubSpot, the downloads), and a staff member applying a merge
after the dry run, against the loopback HubSpot stand-in."""

from __future__ import annotations

import copy
import re

import pytest
from playwright.sync_api import expect

from reviews.models import AppliedMerge
from tests.connectors.merge_standin import HubSpotStandIn
from tests.connectors.test_merges import PORTAL, TOKEN, connect_acme, sync
from tests.engine.ingest.hubspot_exports import AS_OF, BATCH
from tests.web.test_browser import browser, log_in, page, screenshot  # noqa: F401

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

# BATCH with owners on some records (HubSpot's hubspot_owner_id), so the plan has groups.
OWNERS = {"5003": "maya@acme.example", "5004": "owen@acme.example", "9004": "owen@acme.example"}


def owned_batch() -> dict:
    batch = copy.deepcopy(BATCH)
    for record in batch["companies"] + batch["deals"]:
        if record["id"] in OWNERS:
            record["owner"] = OWNERS[record["id"]]
    return batch


def test_staff_apply_one_merge_after_the_dry_run(page, settings, postgres, redis_url):  # noqa: F811
    run = sync(owned_batch(), AS_OF)
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

        # The fix plan page: merges, then each owner's tasks, most urgent first.
        page.click("#fix-plan")
        expect(page).to_have_url(re.compile(rf"/runs/{run.pk}/fix-plan/$"))
        expect(page.locator("#merges tbody tr")).to_have_count(3)
        groups = page.locator(".owner-group")
        # owen's critical comes first (his company's deals), so his group leads.
        expect(groups.first).to_have_attribute("data-owner", "owen@acme.example")
        expect(page.locator("#hubspot-links")).to_contain_text(f"HubSpot portal {PORTAL}")
        screenshot(page, "fix-plan.png")
        # One owner's tasks, swapped in by htmx; the address says which, and the
        # download beside them is that owner's too.
        page.click('#owner-filter a[data-owner="owen@acme.example"]')
        expect(page).to_have_url(re.compile(r"/fix-plan/\?owner=owen%40acme.example$"))
        expect(groups).to_have_count(1)
        expect(groups.first).to_have_attribute("data-owner", "owen@acme.example")
        expect(page.locator("#fix-plan-tasks-csv")).to_have_attribute(
            "href", f"/runs/{run.pk}/tasks.csv?owner=owen%40acme.example"
        )
        # A record's link opens its page in HubSpot (answered here: no network in tests).
        page.context.route(
            "https://app.hubspot.com/**",
            lambda route: route.fulfill(
                body="<title>HubSpot record</title>", content_type="text/html"
            ),
        )
        link = page.locator('tr[data-record="5004"] a.hubspot-link').first
        with page.expect_popup() as popup:
            link.click()
        assert popup.value.url == f"https://app.hubspot.com/contacts/{PORTAL}/record/0-3/5004"

        page.goto(f"/runs/{run.pk}/")
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
