"""The dataset page's HubSpot connection and the API's pull, against the loopback
stand-in: connect (the token never shown again), pull now, the last pull and its
failure on the page, the connection in GET /datasets/{name}."""

from __future__ import annotations

import pytest
from django.urls import reverse

from connectors import registry
from connectors.models import Connection, Pull
from reviews.apiauth.tokens import create_token
from reviews.models import Dataset
from tests.connectors.portals import problem_portal
from tests.connectors.standin import serving

pytestmark = pytest.mark.django_db
TOKEN = "pat-na1-good"


@pytest.fixture
def hubspot(settings):
    portal = problem_portal(size=3)
    with serving(portal, settings) as api:
        yield api


@pytest.fixture
def dataset():
    return Dataset.objects.create(name="acme")


def page(client) -> str:
    return client.get(reverse("reviews:dataset", args=["acme"])).content.decode()


def test_connect_on_the_page_then_pull_now_shows_the_last_pull(
    postgres, hubspot, dataset, member_client, django_capture_on_commit_callbacks
):
    assert "Connect a HubSpot or Salesforce portal" in page(member_client)
    response = member_client.post(
        reverse("reviews:dataset_connect", args=["acme"]), {"token": TOKEN, "every_hours": 12}
    )
    assert response.status_code == 302
    html = page(member_client)
    assert "Portal <strong data-portal>4242</strong>" in html and TOKEN not in html
    assert "Pulled every <strong>12 h</strong>" in html
    with django_capture_on_commit_callbacks(execute=True):
        member_client.post(reverse("reviews:dataset_pull", args=["acme"]))
    pull = Pull.objects.get()
    assert pull.status == Pull.Status.DONE and pull.requested_by == "page"
    html = page(member_client)
    assert f"run #{pull.run_id}" in html and "data-records>18 (18 fetched" in html


def test_a_failed_pull_shows_its_reason_on_the_page(
    postgres, hubspot, dataset, member_client, django_capture_on_commit_callbacks
):
    member_client.post(
        reverse("reviews:dataset_connect", args=["acme"]), {"token": TOKEN, "every_hours": 24}
    )
    hubspot.portal.tokens.clear()
    with django_capture_on_commit_callbacks(execute=True):
        member_client.post(reverse("reviews:dataset_pull", args=["acme"]))
    html = page(member_client)
    assert "data-pull-error>HubSpot refused the token (401)" in html


def test_a_refused_token_is_not_kept_and_the_page_says_why(
    postgres, hubspot, dataset, member_client
):
    response = member_client.post(
        reverse("reviews:dataset_connect", args=["acme"]),
        {"token": "nope", "every_hours": 24},
        follow=True,
    )
    assert "Authentication credentials not found" in response.content.decode()
    assert not Connection.objects.exists()


def test_the_api_pulls_and_shows_the_connection(
    postgres, hubspot, dataset, member, client, django_capture_on_commit_callbacks
):
    secret = create_token(member, "nightly").secret
    auth = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
    url = "/api/v1/datasets/acme/pull"
    assert client.post(url, content_type="application/json", **auth).status_code == 400
    none = client.post("/api/v1/datasets/none/pull", content_type="application/json", **auth)
    assert none.status_code == 404
    from connectors.pulls import connect

    connect(dataset, TOKEN)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"{url}?full=true", **auth)
    assert response.status_code == 202, response.content
    assert response.json()["kind"] == "full"
    Pull.objects.create(connection=dataset.connection, kind="incremental")  # one queued
    assert client.post(url, content_type="application/json", **auth).status_code == 409
    body = client.get("/api/v1/datasets/acme", **auth).json()
    assert body["connection"]["portal_id"] == "4242"
    assert body["connection"]["last_pull"]["status"] == "done"
    assert body["connection"]["current_pull"]["status"] == "queued"
    assert TOKEN not in str(body)


def test_outsiders_get_404_and_viewers_403(postgres, hubspot, django_user_model, client):
    from workspaces.models import Membership, Role, Workspace

    team = Workspace.objects.create(name="alpha team")
    dataset = Dataset.objects.create(name="acme", workspace=team)
    outsider = django_user_model.objects.create_user("outsider", password="x-pass-12345")
    viewer = django_user_model.objects.create_user("viewer", password="x-pass-12345")
    Membership.objects.filter(user__in=[outsider, viewer]).delete()
    Membership.objects.create(workspace=team, user=viewer, role=Role.VIEWER)
    urls = [
        reverse(name, args=["acme"])
        for name in ("reviews:dataset_connect", "reviews:dataset_pull", "reviews:dataset_schedule")
    ]
    client.force_login(outsider)
    assert [client.post(u, {"token": TOKEN, "every_hours": 1}).status_code for u in urls] == [
        404,
        404,
        404,
    ]
    client.force_login(viewer)
    assert client.post(urls[0], {"token": TOKEN, "every_hours": 1}).status_code == 403
    assert not Connection.objects.filter(dataset=dataset).exists()


def test_the_connect_form_offers_the_registrys_crms(monkeypatch, dataset, member_client):
    html = page(member_client)
    assert '<select name="provider">' in html and '<option value="salesforce">' in html
    assert "Connect a HubSpot or Salesforce portal" in html
    assert 'name="client_secret"' in html and 'name="domain"' in html  # Salesforce's fields
    monkeypatch.delitem(registry.CONNECTORS, "salesforce")  # one CRM: no choice to make
    html = page(member_client)
    assert '<input type="hidden" name="provider" value="hubspot">' in html
    assert "<h2>HubSpot connection</h2>" in html and '<select name="provider">' not in html
    assert 'name="client_secret"' not in html
