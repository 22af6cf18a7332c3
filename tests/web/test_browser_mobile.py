"""The dashboard on a phone, in a real Chromium at narrow widths: the top bar's every
entry, Log out included, stays on screen and works; nothing makes the page scroll
sideways."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.web.test_browser import PASSWORD, browser, screenshot  # noqa: F401 (fixture)

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

PHONES = [(320, 640), (375, 740), (414, 896)]


@pytest.fixture
def phone(browser, live_server, django_user_model, request) -> Page:  # noqa: F811
    width, height = request.param
    django_user_model.objects.create_user("alexandra.longname", password=PASSWORD, is_staff=True)
    context = browser.new_context(
        base_url=live_server.url,
        viewport={"width": width, "height": height},
        is_mobile=True,
        has_touch=True,
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def on_screen(page: Page, selector: str) -> bool:
    """Whether the element is inside the phone's screen (its width, not a layout viewport
    the browser widened to fit what spills over) and is what a tap at its centre hits."""
    return page.locator(selector).evaluate(
        """(e, width) => {
            const box = e.getBoundingClientRect();
            if (box.width === 0 || box.height === 0) return false;
            if (box.left < 0 || box.right > width) return false;
            if (box.top < 0 || box.bottom > window.innerHeight) return false;
            const hit = document.elementFromPoint(box.left + box.width / 2,
                                                  box.top + box.height / 2);
            return hit === e || e.contains(hit);
        }""",
        page.viewport_size["width"],
    )


@pytest.mark.parametrize("phone", PHONES, indirect=True, ids=lambda size: f"{size[0]}px")
def test_log_out_stays_reachable_on_a_phone(phone):
    page = phone
    page.goto("/accounts/login/")
    page.fill("input[name=username]", "alexandra.longname")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    expect(page.locator("h1")).to_have_text("Datasets")  # the home page
    width = page.viewport_size["width"]
    screenshot(page, f"mobile-nav-{width}.png")

    overflow = page.evaluate("document.documentElement.scrollWidth") - width
    assert overflow <= 0, f"the page is {overflow} px wider than the phone"
    for label in ("Datasets", "Upload", "Runs", "Spend", "Admin", "API tokens"):
        link = f".topbar a:text-is('{label}')"
        assert on_screen(page, link), label
    assert on_screen(page, ".topbar button:text-is('Log out')")

    page.locator(".topbar button:text-is('Log out')").tap()
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    page.goto("/runs/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/runs/$"))
