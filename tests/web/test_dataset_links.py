"""Every dataset name gets links that work: a name that is, or holds, a `.` or `..`
segment (`.`, `a/../b`, `../admin`) is not resolved away by the browser before the
request is sent, and `%` in a name cannot make its link another's."""

from __future__ import annotations

import html
import re
from urllib.parse import unquote

import pytest
from django.urls import resolve, reverse

from tests.orchestration.test_dataset_history import reviewed, small_sync

pytestmark = pytest.mark.django_db

NAMES = [".", "a/../b", "../admin", "..", "%2E", "50%", "acme/hubspot"]
DOT, DOT_DOT = {".", "%2e"}, {"..", ".%2e", "%2e.", "%2e%2e"}


def as_a_browser_sends(href: str) -> str:
    """The path and query a browser requests for `href` (the WHATWG URL standard):
    `.` and `..` segments, also spelled %2e, are dropped or climb one level."""
    path, mark, query = href.partition("?")
    segments = path.split("/")[1:]
    sent: list[str] = []
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment.lower() in DOT_DOT:
            if sent:
                sent.pop()
            if last:
                sent.append("")
        elif segment.lower() in DOT:
            if last:
                sent.append("")
        else:
            sent.append(segment)
    return "/" + "/".join(sent) + mark + query


def dataset_heading(name: str) -> str:
    return f'<h1>Dataset <span class="rid">{html.escape(name)}</span></h1>'


@pytest.mark.parametrize("name", NAMES)
def test_the_run_pages_dataset_link_opens_that_dataset(member_client, member, name):
    reviewed(small_sync("2026-08-01T09:00:00Z", 1000, dataset="b"), created_by=member)
    run = reviewed(small_sync("2026-08-01T09:00:00Z", 1000, dataset=name), created_by=member)
    page = member_client.get(reverse("reviews:run", args=[run.pk])).content.decode()
    (href,) = re.findall(r'href="([^"]*)" id="dataset-link"', page)
    response = member_client.get(as_a_browser_sends(html.unescape(href)))
    assert response.status_code == 200, href
    assert dataset_heading(name) in response.content.decode()


@pytest.mark.parametrize("name", NAMES)
def test_every_link_and_form_of_the_dataset_page_reaches_its_dataset(member_client, member, name):
    reviewed(small_sync("2026-08-01T09:00:00Z", 1000, dataset=name), created_by=member)
    page = member_client.get(reverse("reviews:dataset", args=[name])).content.decode()
    assert dataset_heading(name) in page
    targets = re.findall(r'(?:href|action|hx-get|hx-post)="(/datasets/[^"]*)"', page)
    assert targets  # the tuning section, the pipelines form, HubSpot's connect form
    for target in targets:
        sent = as_a_browser_sends(html.unescape(target))
        match = resolve(unquote(sent.partition("?")[0]))  # as the server decodes it
        assert match.kwargs["name"] == name, (target, sent, match.url_name)
