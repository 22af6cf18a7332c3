"""A dataset's deal pipelines on the dashboard and in admin (issue 21)."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from reviews.models import Dataset
from tests.engine.ingest import renewals_portal as portal

pytestmark = pytest.mark.django_db


def test_upload_pipelines_on_the_dataset_page(member_client):
    dataset = Dataset.objects.create(name="acme-renewals")
    url = reverse("reviews:dataset_pipelines", args=[dataset.name])
    body = json.dumps(portal.pipelines_response()).encode()

    response = member_client.post(url, {"pipelines": SimpleUploadedFile("p.json", body)})

    assert response.status_code == 302
    dataset.refresh_from_db()
    assert {p["id"] for p in dataset.pipelines} == {"default", portal.RENEWALS_ID}
    page = member_client.get(reverse("reviews:dataset", args=[dataset.name])).content.decode()
    assert "Renewal Won <code>1234568</code> (won)" in page


def test_a_bad_pipelines_file_is_named_on_the_dataset_page(member_client):
    dataset = Dataset.objects.create(name="acme-renewals")
    url = reverse("reviews:dataset_pipelines", args=[dataset.name])

    response = member_client.post(
        url, {"pipelines": SimpleUploadedFile("p.json", b"{not json")}, follow=True
    )

    assert "not JSON" in response.content.decode()
    dataset.refresh_from_db()
    assert dataset.pipelines == []


def test_admin_refuses_malformed_pipelines_and_records_an_edit(admin_client):
    dataset = Dataset.objects.create(name="acme-renewals")
    url = reverse("admin:reviews_dataset_change", args=[dataset.pk])
    form = {"name": dataset.name, "verdict_scope": "new"}

    bad = admin_client.post(url, {**form, "pipelines": '[{"id": "x", "stages": [{"won": 1}]}]'})
    good = admin_client.post(
        url,
        {**form, "pipelines": json.dumps(
            [{"id": "x", "label": "Renewals", "stages": [{"id": "won", "won": True}]}])},
    )  # fmt: skip

    assert bad.status_code == 200 and "stages[0].id: missing" in bad.content.decode()
    assert good.status_code == 302
    dataset.refresh_from_db()
    assert dataset.pipelines_from == "admin"
    assert dataset.pipelines[0]["stages"][0]["id"] == "won"
