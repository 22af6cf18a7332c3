"""The spend page in a real Chromium, on a day with model spend from the loopback
gateway: the chart has bars, every column of the table is inside its card. This test
takes README's spend screenshot."""

from __future__ import annotations

import io
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone
from playwright.sync_api import Page, expect

from ledger.models import LedgerEntry
from reviews.engine.specialists import NAMES
from reviews.llm.roster import CHEAP, MID
from reviews.models import Batch, ReviewRun
from tests.llm.fake_gateway import completion
from tests.llm.helpers import API_KEY
from tests.web.test_browser import PASSWORD, browser, log_in, screenshot  # noqa: F401

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
LITE, FLASH = CHEAP, MID  # the default roster
NOTHING = {"add": [], "adjust": [], "dismiss": []}


def busy_past_weeks(batch: Batch) -> None:
    """Earlier days of a team at work, many runs a day: large token counts make the
    widest cells the table has to fit."""
    now = timezone.now()
    for days_ago in range(1, 29):
        at = now - timedelta(days=days_ago)
        runs = ReviewRun.objects.bulk_create(
            ReviewRun(batch=batch, tier="full", status="done", as_of=at)
            for _ in range(20 + days_ago % 7 * 6)
        )
        ReviewRun.objects.filter(pk__in=[r.pk for r in runs]).update(created_at=at)
        entries = LedgerEntry.objects.bulk_create(
            LedgerEntry(
                run=run,
                agent=agent,
                model_requested=FLASH if agent == "coordinator" else LITE,
                model=FLASH if agent == "coordinator" else LITE,
                input_tokens=24_000 + 450 * days_ago,
                cached_tokens=8_000,
                output_tokens=1_900,
                cost_micros=3_400 if agent != "coordinator" else 14_800,
                outcome=LedgerEntry.Outcome.OK,
            )
            for run in runs
            for agent in (*NAMES, "coordinator")
        )
        LedgerEntry.objects.filter(pk__in=[e.pk for e in entries]).update(created_at=at)


def review(path: Path) -> None:
    with pytest.raises(SystemExit):
        call_command("review", str(path), "--format", "json", stdout=io.StringIO())


@pytest.fixture
def spend_page(browser, live_server, django_user_model) -> Page:  # noqa: F811
    django_user_model.objects.create_user("alex", password=PASSWORD, is_staff=True)
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 860})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def test_spend_page_with_model_spend_fits_its_cards(
    spend_page, fake_gateway, settings, postgres, redis_url
):
    settings.REDIS_URL = redis_url
    settings.LLM_BASE_URL = fake_gateway.base_url
    settings.LLM_API_KEY = API_KEY
    settings.DAILY_TOKEN_BUDGET = 1_000_000
    fake_gateway.script(
        LITE,
        *(
            completion(NOTHING, prompt_tokens=2400 + 300 * i, completion_tokens=90)
            for i in range(len(NAMES))
        ),
    )
    fake_gateway.script(
        FLASH,
        completion(
            {"summary": "Two duplicate deals and a won deal without a close date."},
            prompt_tokens=5200,
            cached_tokens=1800,
            completion_tokens=380,
        ),
    )
    review(SAMPLES / "full.json")
    review(SAMPLES / "full.json")  # served from the cache: no model call
    busy_past_weeks(ReviewRun.objects.earliest("created_at").batch)

    log_in(spend_page)
    spend_page.goto("/spend/")
    expect(spend_page.locator("#spend-chart rect")).not_to_have_count(0)
    expect(spend_page.locator("#spend-total")).to_contain_text("fresh 1")
    expect(spend_page.locator("#spend-total")).to_contain_text("cached 1")
    screenshot(spend_page, "spend.png")

    for table in ("#spend-table", "#spend-by-model", "#spend-by-agent"):
        fit = spend_page.evaluate(
            """(sel) => {
                const table = document.querySelector(sel);
                const card = table.closest('.card');
                return {table: table.getBoundingClientRect().right,
                        card: card.getBoundingClientRect().right,
                        scroll: card.scrollWidth - card.clientWidth};
            }""",
            table,
        )
        assert fit["table"] <= fit["card"] + 0.5 and fit["scroll"] <= 0, (table, fit)
