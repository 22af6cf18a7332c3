"""The dashboard in a real headless Chromium, against a live server and a real Celery
worker on Redis: what a user sees, including the live updates only JavaScript gives."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import httpx
import pytest
from django.db import connections
from playwright.sync_api import Browser, Page, expect, sync_playwright

from reviews.models import ReviewRun, Verdict
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from tests import services
from tests.services import ROOT
from tests.uploads import DATA, upload

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# README's pictures are refreshed on request (UPDATE_SCREENSHOTS=1 make test); every other
# run keeps its screenshots out of the work tree.
SCREENSHOTS = ROOT / (
    "docs/screenshots" if os.environ.get("UPDATE_SCREENSHOTS") else "test-results/screenshots"
)
PASSWORD = "staff-pass-123"
RUN_TIMEOUT_MS = 90_000


@pytest.fixture
def browser(monkeypatch) -> Browser:
    if not CHROMIUM.exists():
        message = f"Chromium not found at {CHROMIUM}: apt-get install -y chromium"
        if services.CI:
            pytest.fail(message)
        pytest.skip(message)
    # Playwright's sync API keeps an event loop running in this thread; the test's own
    # ORM calls are plain synchronous ones all the same.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()
        # With a loop running, Django keeps this thread's connections apart from the
        # usual ones: close them here, or the test database cannot be dropped.
        connections.close_all()


@pytest.fixture
def page(browser, live_server, django_user_model) -> Page:
    django_user_model.objects.create_user("alex", password=PASSWORD, is_staff=True)
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 860})
    page = context.new_page()
    page.set_default_timeout(15_000)
    # The CSP (settings.CONTENT_SECURITY_POLICY) must not block what the pages use.
    blocked: list[str] = []
    page.on(
        "console",
        lambda message: (
            blocked.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    yield page
    context.close()
    assert not blocked, blocked


def log_in(page: Page) -> None:
    """Signed in on the upload page (the home page, /, lists the datasets)."""
    page.goto("/upload/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/upload/$"))
    page.fill("input[name=username]", "alex")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    expect(page.locator("h1")).to_have_text("Review a CRM batch")


def screenshot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / name), full_page=True)


def test_review_from_upload_to_break_glass(page, worker):
    log_in(page)

    page.set_input_files("input[name=files]", str(DATA / "seed-example.json"))
    page.click("text=Upload and review")
    expect(page).to_have_url(re.compile(r"/runs/\d+/$"))
    run_id = int(page.url.rstrip("/").rsplit("/", 1)[1])

    verdict = page.locator("#verdict[data-verdict]")
    expect(verdict).to_have_attribute(
        "data-verdict", "approve_with_comments", timeout=RUN_TIMEOUT_MS
    )
    expect(page.locator("#agents tbody tr")).to_have_count(5)
    expect(page.locator('#agents tr[data-status="done"]')).to_have_count(5)
    expect(page.locator("#ledger")).to_contain_text("Analyst baseline")

    first = page.locator("details.finding").first
    first.locator("summary").click()
    expect(first.locator(".f-body")).to_be_visible()
    expect(first.locator(".f-body")).to_contain_text("Records")
    screenshot(page, "run.png")

    # The category filter swaps the findings in place and keeps the URL shareable.
    page.click("#findings .filters a:has-text('pipeline')")
    expect(page).to_have_url(re.compile(r"\?category=pipeline$"))
    expect(page.locator("details.finding .badge", has_text="dedup")).to_have_count(0)

    page.click("summary:has-text('Break glass')")
    page.fill("textarea[name=reason]", "Known sync artefact; merging in HubSpot today")
    page.click("text=Approve by break glass")
    expect(page.locator("#verdict")).to_contain_text("Approved by break glass")
    expect(page.locator("#original-verdict")).to_have_text("Approved with comments")
    expect(page.locator("#override-reason")).to_have_text(
        "Known sync artefact; merging in HubSpot today"
    )
    expect(page.locator("#verdict")).to_contain_text("overridden by alex")
    verdict_row = Verdict.objects.get(run_id=run_id)
    assert (verdict_row.decision, verdict_row.effective_decision) == (
        "approve_with_comments",
        "approve",
    )

    page.goto("/upload/")
    broken = {"companies": [{"name": "no id"}], "contacts": [], "deals": []}
    page.set_input_files(
        "input[name=files]",
        files=[
            {
                "name": "broken.json",
                "mimeType": "application/json",
                "buffer": json.dumps(broken).encode(),
            }
        ],
    )
    page.click("text=Upload and review")
    errors = page.locator("#upload-errors")
    expect(errors).to_contain_text("Batch rejected")
    expect(errors.locator("code").first).to_have_text("companies[0].id")

    page.goto("/upload/")
    screenshot(page, "upload.png")  # spend.png: tests/web/test_browser_spend.py


def test_run_page_updates_live_until_the_verdict(page, worker):
    # Queued without dispatch, so the page is surely open before the worker starts.
    run = submit([upload("seed-example.json")], dispatch=False).run
    log_in(page)
    polls: list[int] = []
    page.on(
        "response",
        lambda r: polls.append(r.status) if r.request.headers.get("hx-request") else None,
    )
    page.goto(f"/runs/{run.pk}/")
    expect(page.locator("#verdict")).to_contain_text("Reviewing…")
    expect(page.locator('#agents tr[data-status="pending"]')).to_have_count(5)
    page.wait_for_timeout(1500)  # at least one poll while nothing has happened
    assert 200 in polls

    start_review.delay(run_id=run.pk)  # to the worker, through Redis
    expect(page.locator("#verdict")).to_have_attribute(
        "data-verdict", "approve_with_comments", timeout=RUN_TIMEOUT_MS
    )
    expect(page.locator('#agents tr[data-status="done"]')).to_have_count(5)
    assert polls[-1] == 286  # the view stopped the polling
    count = len(polls)
    page.wait_for_timeout(2500)
    assert len(polls) == count  # and nothing polls any more
    assert ReviewRun.objects.get(pk=run.pk).status == ReviewRun.Status.DONE


def test_an_api_token_is_made_shown_once_used_and_revoked(page, live_server, redis_url):
    log_in(page)
    page.click("header >> text=API tokens")
    expect(page.locator("h1")).to_have_text("API tokens")
    page.fill("input[name=name]", "nightly export")
    page.uncheck("input[name=scopes][value=read]")
    page.click("text=Create token")
    secret = page.locator("#token-secret").inner_text()
    assert secret.startswith("rr_")
    expect(page.locator('#tokens tr[data-token="nightly export"]')).to_contain_text("upload")

    api = f"{live_server.url}/api/v1"
    headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
    seed = (DATA / "seed-example.json").read_bytes()
    assert httpx.post(f"{api}/batches", content=seed, headers=headers).status_code == 202
    assert httpx.get(f"{api}/runs", headers=headers).status_code == 403  # upload only

    page.goto("/settings/tokens/")
    expect(page.locator("#token-secret")).to_have_count(0)  # shown once
    expect(page.locator('#tokens tr[data-token="nightly export"]')).to_contain_text("Revoke")
    page.click('#tokens tr[data-token="nightly export"] >> text=Revoke')
    expect(page.locator('#tokens tr[data-token="nightly export"]')).to_have_attribute(
        "data-active", "false"
    )
    assert httpx.post(f"{api}/batches", content=seed, headers=headers).status_code == 401
