"""The analyst's first page, in a real headless Chromium against a live server: sign in,
land on the home page (`/`), read each dataset's health, trend, criticals and money at
risk, hover a sync of a trend, then open a dataset from its row: its overview, then its first
sync's fix plan page (the fix-first list) and a record's page in HubSpot (issue 37's
walk). Runs are reviewed
in-process beforehand (the upload path has its own browser tests), so the page shows a
history of syncs. Screenshots: home.png and home-dataset.png."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from playwright.sync_api import expect

from connectors import tokens
from connectors.models import Connection
from reviews.models import Dataset
from tests.orchestration.test_dataset_history import reviewed
from tests.uploads import upload
from tests.web.conftest import reviewed as reviewed_files
from tests.web.test_browser import PASSWORD, browser, screenshot  # noqa: F401 (fixture)
from tests.web.test_browser import page as page  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]
PORTAL = "4242"  # acme-hubspot's HubSpot portal: its records link there


def crm(as_of: str, dataset: str, *, broken_won: int = 0, pairs: int = 0, currency: str = "USD"):
    """Twenty companies, each with an open deal; the first `broken_won` deals won without
    a close date (critical), and `pairs` companies entered twice (a warning pair each).
    Ids are numbers, as HubSpot's are, so the fix plan links each record to its page."""
    companies = [
        {"id": str(1000 + i), "name": f"Company {i}", "domain": f"company{i}.example"}
        for i in range(20)
    ]
    companies += [
        {"id": str(2000 + i), "name": f"Company {i} Ltd", "domain": f"www.company{i}.example"}
        for i in range(pairs)
    ]
    deals = [
        {"id": str(5000 + i), "name": f"Company {i} renewal", "amount": 12_000 + 1_000 * i,
         "currency": currency, "companyId": str(1000 + i),
         **({"stage": "closedwon"} if i < broken_won
            else {"stage": "appointmentscheduled", "closeDate": "2026-12-01"})}
        for i in range(20)
    ]  # fmt: skip
    return {
        "exportedAt": as_of,
        "dataset": dataset,
        "companies": companies,
        "contacts": [],
        "deals": deals,
    }


def test_home_page_then_a_dataset(page):  # noqa: F811
    for day, (broken, pairs) in enumerate([(3, 2), (2, 2), (1, 1), (0, 1)], start=1):
        reviewed(crm(f"2026-08-0{day}T09:00:00Z", "acme-hubspot", broken_won=broken, pairs=pairs))
    for day, (broken, pairs) in enumerate([(1, 0), (2, 1), (4, 1)], start=1):
        as_of = f"2026-08-0{day}T07:30:00Z"
        reviewed(crm(as_of, "globex-eu", broken_won=broken, pairs=pairs, currency="EUR"))
    reviewed(crm("2026-08-04T06:00:00Z", "initech-crm"))
    Dataset.objects.filter(name="acme-hubspot").update(hubspot_portal_id=PORTAL)
    Connection.objects.create(
        dataset=Dataset.objects.get(name="globex-eu"),
        token_sealed=tokens.encrypt("pat-home-browser"),
        portal_id="4411",
        next_pull_at=datetime(2026, 8, 5, 6, 0, tzinfo=UTC),
    )
    one_off = reviewed_files([upload("seed-example.json")])
    assert one_off.batch.dataset_id is None

    page.goto("/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/$"))
    page.fill("input[name=username]", "alex")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    expect(page.locator("h1")).to_have_text("Datasets")
    expect(page.locator("nav a.active")).to_have_text("Datasets")

    rows = page.locator("tr.dataset-row")
    expect(rows).to_have_count(3)
    # Least healthy first: globex got worse, acme better, initech has nothing open.
    names = [rows.nth(i).get_attribute("data-dataset") for i in range(3)]
    assert names == ["globex-eu", "acme-hubspot", "initech-crm"]
    globex = rows.nth(0)
    expect(globex.locator(".criticals")).to_have_text("4")
    expect(globex.locator(".money")).to_contain_text("€")
    expect(globex.locator(".pull")).to_contain_text("2026-08-05 06:00 UTC")
    expect(globex.locator(".pull")).to_contain_text("scheduled")
    expect(rows.nth(2).locator(".health")).to_have_text("100.0")
    # A trend: one point per sync, each with its hover value.
    points = rows.nth(1).locator("svg.spark circle")
    expect(points).to_have_count(4)
    expect(points.last.locator("title")).to_contain_text("sync #4 · 2026-08-04 09:00: health")
    points.last.hover()
    expect(page.locator("#one-offs")).to_contain_text(one_off.batch.title[:20])
    screenshot(page, "home.png")

    acme_health = rows.nth(1).locator(".health").inner_text()
    rows.nth(1).locator("a.dataset-link").click()
    expect(page).to_have_url(re.compile(r"/datasets/acme-hubspot/\?workspace=\d+$"))
    expect(page.locator("h1")).to_contain_text("acme-hubspot")
    expect(page.locator("#syncs tbody tr")).to_have_count(4)
    expect(page.locator("#syncs [data-health]").first).to_have_text(acme_health)  # sync #4
    expect(page.locator("nav a.active")).to_have_text("Datasets")
    # The overview first: the trend, a point per sync with its value on hover.
    expect(page.locator("#overview")).to_be_visible()
    expect(page.locator("#trend circle.dot-critical")).to_have_count(4)
    screenshot(page, "home-dataset.png")
    # Property completeness: each object's properties with a bar, the latest sync's.
    completeness = page.locator("#completeness")
    deals = completeness.locator("details[data-object=deals]")
    expect(deals.locator("tr[data-property=closeDate] td.num").first).to_have_text("100%")
    expect(deals.locator("tr[data-property=closeDate] .fill-bar > span")).to_be_visible()
    # The fields this export never carried are one line, not rows at 0%.
    expect(deals.locator("tr[data-property=recordSource]")).to_have_count(0)
    expect(deals.locator(".never-filled")).to_contain_text("recordSource")
    completeness.scroll_into_view_if_needed()
    screenshot(page, "dataset-completeness.png")

    # The first sync's fix-first list (its criticals are tasks; the latest has only a
    # duplicate left, a merge), on its fix plan page, then a record in HubSpot.
    page.locator("#syncs tbody tr").last.locator("a[href^='/runs/']").first.click()
    page.click("#fix-plan")
    expect(page).to_have_url(re.compile(r"/runs/\d+/fix-plan/$"))
    severities = page.locator("#fix-plan-tasks tr[data-severity]")
    order = [severities.nth(i).get_attribute("data-severity") for i in range(severities.count())]
    ranks = {"critical": 0, "warning": 1, "suggestion": 2}
    assert order and [ranks[s] for s in order] == sorted(ranks[s] for s in order)  # fix first
    page.context.route(
        "https://app.hubspot.com/**",
        lambda route: route.fulfill(body="<title>HubSpot record</title>", content_type="text/html"),
    )
    link = page.locator("#fix-plan-tasks a.hubspot-link").first
    record = link.inner_text()
    with page.expect_popup() as popup:
        link.click()
    assert popup.value.url.startswith(f"https://app.hubspot.com/contacts/{PORTAL}/record/")
    assert popup.value.url.endswith(f"/{record}")
