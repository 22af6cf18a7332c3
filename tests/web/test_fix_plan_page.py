"""The fix plan as a page (docs/output.md#the-fix-plan-page): merges and the owners'
tasks grouped by owner in the engine's fix-first order, filtered by owner, each record
linked to HubSpot when the portal is known; a run with no plan says why (409). The real
submit path and review (eager tasks), read through the Django client."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.urls import reverse

from reviews.engine.ingest import UploadedFile
from reviews.models import Dataset
from tests.uploads import json_upload
from tests.web.conftest import queued, reviewed

pytestmark = pytest.mark.django_db

PORTAL = "4512345"
SAMPLES = Path(__file__).resolve().parents[2] / "samples"
# Two companies share a domain (a merge); maya owns 101, nobody owns 102; owen owns one
# deal himself. Criticals come first whatever their amount, a warning with more money last.
BATCH = {
    "exportedAt": "2026-08-01T09:00:00Z",
    "companies": [
        {"id": "101", "name": "Acme", "domain": "acme.example", "owner": "maya"},
        {"id": "102", "name": "Beta", "domain": "beta.example"},
        {"id": "103", "name": "Acme Inc", "domain": "www.acme.example"},
    ],
    "contacts": [],
    "deals": [
        {"id": "201", "name": "A", "amount": 9000, "stage": "closedwon", "companyId": "101"},
        {"id": "202", "name": "B", "amount": 5000, "stage": "closedwon", "companyId": "101",
         "hubspot_owner_id": "owen"},
        {"id": "203", "name": "C", "amount": 7000, "stage": "closedwon", "companyId": "102"},
        {"id": "204", "name": "D", "stage": "closedwon", "companyId": "101",
         "closeDate": "2026-06-30"},
        {"id": "205", "name": "E", "amount": 80000, "stage": "appointmentscheduled",
         "companyId": "101", "closeDate": "2026-05-01"},
    ],
}  # fmt: skip


def run_of(portal: str | None = None, dataset: bool = True):
    run = reviewed([json_upload(BATCH)])
    if dataset:
        run.batch.dataset = Dataset.objects.create(name="acme", hubspot_portal_id=portal or "")
        run.batch.save(update_fields=["dataset"])
    return run


def page(client, run, **params) -> str:
    response = client.get(reverse("reviews:fix_plan", args=[run.pk]), params)
    assert response.status_code == 200
    return response.content.decode()


def plan_json(client, run, **params) -> dict:
    return client.get(reverse("reviews:fix_plan_json", args=[run.pk]), params).json()


def task_rows(html: str) -> list[tuple[str, str]]:
    """(owner group, record id) of each task row, in the page's order."""
    rows = []
    for group in re.split(r'<div class="owner-group"', html)[1:]:
        owner = re.match(r' data-owner="([^"]*)"', group).group(1)
        rows += [(owner, record) for record in re.findall(r'<tr data-record="([^"]+)"', group)]
    return rows


def test_the_run_page_links_the_fix_plan_page(member_client):
    run = run_of()
    html = member_client.get(reverse("reviews:run", args=[run.pk])).content.decode()
    assert f'id="fix-plan" href="{reverse("reviews:fix_plan", args=[run.pk])}"' in html


def test_tasks_are_grouped_by_owner_in_the_engines_fix_first_order(member_client):
    run = run_of(PORTAL)
    tasks = plan_json(member_client, run)["tasks"]
    # The engine's order: criticals (most money first, then none), then the warning.
    assert [(t["record_id"], t["severity"]) for t in tasks] == [
        ("201", "critical"),
        ("203", "critical"),
        ("202", "critical"),
        ("204", "critical"),
        ("205", "warning"),
    ]
    rows = task_rows(page(member_client, run))
    # Owners in the order of their most urgent task; each group keeps the engine's order.
    assert rows == [("maya", "201"), ("maya", "204"), ("maya", "205"), ("", "203"), ("owen", "202")]
    for owner in ("maya", "", "owen"):
        engine = [t["record_id"] for t in tasks if (t["owner"] or "") == owner]
        assert [record for o, record in rows if o == owner] == engine


def test_money_kinds_and_severities_are_in_words(member_client):
    html = page(member_client, run_of(PORTAL))
    assert "$80,000" in html and "$9,000" in html
    assert "deal: won without an amount" in html  # the kind's label, not its name
    assert "company group: sharing a domain" in html  # the merge's kind
    assert re.search(r'class="badge sev-critical" title="critical">Must fix<', html)
    assert re.search(r'class="badge sev-warning" title="warning">Should fix<', html)


def test_the_owner_filter_keeps_one_owners_tasks_and_its_downloads(member_client):
    run = run_of(PORTAL)
    mayas = page(member_client, run, owner="maya")
    assert task_rows(mayas) == [("maya", "201"), ("maya", "204"), ("maya", "205")]
    url = reverse("reviews:tasks_csv", args=[run.pk])
    assert f'href="{url}?owner=maya"' in mayas
    assert 'data-primary="101"' in mayas  # merges are nobody's: they stay
    assert task_rows(page(member_client, run, owner="")) == [("", "203")]
    nobodys = page(member_client, run, owner="nobody")
    assert task_rows(nobodys) == [] and "No tasks for nobody." in nobodys


def test_an_htmx_request_gets_the_tasks_alone_and_the_url_the_whole_page(member_client):
    run = run_of(PORTAL)
    url = reverse("reviews:fix_plan", args=[run.pk])
    fragment = member_client.get(url, {"owner": "owen"}, headers={"HX-Request": "true"})
    text = fragment.content.decode()
    assert text.lstrip().startswith('<section class="card table-card" id="fix-plan-tasks">')
    assert "<html" not in text and task_rows(text) == [("owen", "202")]
    whole = page(member_client, run, owner="owen")
    assert "<html" in whole and 'id="merges"' in whole and task_rows(whole) == task_rows(text)


def test_each_record_links_to_hubspot_when_the_dataset_names_its_portal(member_client):
    html = page(member_client, run_of(PORTAL))
    record = f"https://app.hubspot.com/contacts/{PORTAL}/record"
    assert f'href="{record}/0-3/204"' in html  # a deal's task
    assert f'href="{record}/0-2/101"' in html  # the merge's survivor
    assert f'href="{record}/0-2/103"' in html  # the company merged into it
    assert f"in HubSpot portal {PORTAL}" in html


def test_no_link_when_the_portal_is_unknown_said_plainly(member_client):
    html = page(member_client, run_of(portal=None))
    assert "app.hubspot.com" not in html
    assert "No links to HubSpot: dataset acme names no HubSpot portal." in html
    one_off = page(member_client, run_of(dataset=False))
    assert "app.hubspot.com" not in one_off
    assert "a one-off upload does not say which HubSpot portal" in one_off


def test_a_salesforce_sync_links_to_its_org_or_says_how(member_client):
    names = ("Account", "Contact", "Lead", "Opportunity", "OpportunityContactRole", "User")
    files = [
        UploadedFile(f"{name}.csv", (SAMPLES / "salesforce" / f"{name}.csv").read_bytes())
        for name in names
    ]
    run = reviewed(files)
    run.batch.dataset = Dataset.objects.create(name="acme-sf")
    run.batch.save(update_fields=["dataset"])
    html = page(member_client, run)
    assert "No links to Salesforce: dataset acme-sf names no Salesforce org." in html
    assert "lightning" not in html and "app.hubspot.com" not in html
    assert "merge in Salesforce before" in html and "HubSpot" not in html
    run_page = member_client.get(reverse("reviews:run", args=[run.pk])).content.decode()
    assert "state columns (IsWon, IsClosed, Probability)" in run_page  # Salesforce's names

    Dataset.objects.filter(name="acme-sf").update(salesforce_url="https://acme.my.salesforce.com")
    html = page(member_client, run)
    assert "in Salesforce org acme.my.salesforce.com" in html
    links = re.findall(r'href="(https://acme\.my\.salesforce\.com/[^"]+)"', html)
    assert links and all(
        re.fullmatch(r"https://acme\.my\.salesforce\.com/lightning/r/"
                     r"(Account|Contact|Opportunity|Lead)/[A-Za-z0-9]{18}/view", link)
        for link in links
    )  # fmt: skip


def test_a_run_with_no_plan_yet_says_why(member_client):
    run = queued()
    response = member_client.get(reverse("reviews:fix_plan", args=[run.pk]))
    assert response.status_code == 409
    text = response.content.decode()
    assert "No fix plan for this run: run" in text and "needs a finished review" in text


def test_the_page_needs_a_login(client):
    run = run_of()
    url = reverse("reviews:fix_plan", args=[run.pk])
    assert client.get(url).url == f"/accounts/login/?next={url}"


def test_the_downloads_stay_linked_from_the_page(member_client):
    run = run_of(PORTAL)
    html = page(member_client, run)
    for name in ("merges_csv", "tasks_csv", "fix_plan_json"):
        assert f'href="{reverse(f"reviews:{name}", args=[run.pk])}"' in html


def test_a_long_list_shows_each_owners_most_urgent_then_pages(member_client, monkeypatch):
    from reviews.web import fixplan_page

    monkeypatch.setattr(fixplan_page, "PER_OWNER", 2)
    monkeypatch.setattr(fixplan_page, "TASKS_PER_PAGE", 2)
    run = run_of(PORTAL)
    overview = page(member_client, run)
    assert task_rows(overview)[:2] == [("maya", "201"), ("maya", "204")]
    assert ("maya", "205") not in task_rows(overview)
    assert re.search(r'the 2 most urgent; <a href="\?owner=maya"[^>]*>all 3</a>', overview)
    second = page(member_client, run, owner="maya", page="2")
    assert task_rows(second) == [("maya", "205")] and "page 2 of 2" in second
