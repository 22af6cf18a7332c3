"""The dataset page's charts: open problems by owner and by record source (the latest
sync's standing problems), and the trend's points with their values on hover. The
sample dataset's two syncs (samples/syncs/northwind) are reviewed as `make run` does."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command
from django.db import transaction
from django.test import Client, TestCase
from django.urls import reverse

from reviews.models import Dataset
from reviews.orchestration.store.parsed import forget_parsed
from reviews.web import completeness

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def page(django_db_setup, django_db_blocker) -> str:
    """The sample dataset's page, rendered once: the tests only read it. Its rows are
    rolled back before they run."""
    from django.contrib.auth import get_user_model

    with django_db_blocker.unblock(), transaction.atomic():
        with TestCase.captureOnCommitCallbacks(execute=True):
            call_command("load_samples", stdout=io.StringIO())
        dataset = Dataset.objects.get(name="northwind")
        client = Client()
        client.force_login(get_user_model().objects.create_superuser("ana", password="x" * 12))
        url = reverse("reviews:dataset", args=[dataset.name])
        html = client.get(url, {"workspace": dataset.workspace_id}).content.decode()
        transaction.set_rollback(True)
    forget_parsed()  # as after each test (tests/conftest.py)
    return html


def bars(page: str, chart_id: str) -> dict[str, int]:
    svg = page[page.index(f'id="{chart_id}"') :]
    svg = svg[: svg.index("</svg>")]
    return {
        name: int(total)
        for name, total in re.findall(r'data-name="([^"]+)" data-total="(\d+)"', svg)
    }


def test_open_problems_by_owner_and_by_record_source(page):
    # The second sync: 1 critical and 5 warnings open (samples/README.md).
    owners = bars(page, "owner-chart")
    assert owners == {"Ana Ruiz": 3, "Owen Price": 3, "Maya Singh": 2}
    assert list(owners) == ["Ana Ruiz", "Owen Price", "Maya Singh"]  # most first, then by name
    assert "<title>Ana Ruiz: 1 critical, 2 warning</title>" in page
    assert bars(page, "source-chart") == {
        "CRM UI": 4,
        "Import / leads-june.csv": 3,  # the source and its detail, as HubSpot exports them
        "Forms / Demo request": 1,
        "Import": 1,
    }


def test_the_trend_has_a_point_per_sync_and_severity_with_its_value(page):
    assert len(re.findall(r'<circle class="dot-critical"', page)) == 2
    assert re.search(r"<title>sync #2 · 2026-08-01: 1 critical</title>", page)


def test_the_page_is_in_sections_an_analyst_can_find_in_order(page):
    nav = page[page.index('<nav class="section-nav"') :]
    assert re.findall(r'href="#(\w+)"', nav[: nav.index("</nav>")]) == [
        "overview", "syncs", "rules", "connection",
    ]  # fmt: skip
    places = [page.index(f'id="{name}"') for name in ("overview", "by-owner", "syncs", "rules")]
    assert places == sorted(places) and page.index('id="connection"') > places[-1]


def test_open_problems_by_deal_stage(page):
    # Of the second sync's open problems, two name deals: the critical negative_amount
    # (6101007, lost) and open_past_close_date (6101003); the rest name no deal.
    assert bars(page, "stage-chart") == {"Closed Lost": 1, "Presentation Scheduled": 1}
    assert "<title>Closed Lost: 1 critical, 0 warning</title>" in page


def fill_row(page: str, object_name: str, label: str) -> str:
    section = page[page.index(f'data-object="{object_name}"') :]
    row = section[section.index(f'data-property="{label}"') :]
    return row[: row.index("</tr>")]


def test_property_completeness_shows_a_fall_since_the_last_sync(page):
    # samples/syncs/northwind: Phone Number on 7 of 8 contacts, then on 3 of 8.
    phone = fill_row(page, "contacts", "Phone Number")
    assert 'class="dropped"' in phone and ">38%<" in phone and "-50 pts" in phone
    email = fill_row(page, "contacts", "Email")
    assert ">100%<" in email and "dropped" not in email
    # The biggest fall is listed first, and the object says how many fell.
    contacts = page[page.index('data-object="contacts"') :]
    assert contacts.index('data-property="Phone Number"') < contacts.index('data-property="Email"')
    assert "1 fell" in contacts[: contacts.index("</summary>")]


@pytest.mark.parametrize(
    ("filled", "total", "percent"),
    [(2, 3, 67), (3, 8, 38), (199, 200, 99), (200, 200, 100), (1, 1000, 1), (0, 5, 0)],
)
def test_a_fill_rate_is_rounded_but_never_full_or_empty_when_it_is_not(filled, total, percent):
    assert completeness._percent({"filled": filled, "total": total}) == percent
