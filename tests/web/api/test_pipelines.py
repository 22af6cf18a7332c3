"""A dataset's deal pipelines over the API (issue 21): PUT HubSpot's pipelines response
as sent, GET what the dataset remembers; a bad body is a 400 naming the problem."""

from __future__ import annotations

import json

import pytest

from reviews.models import Dataset
from tests.engine.ingest import renewals_portal as portal

pytestmark = [pytest.mark.django_db(transaction=True)]
JSON = {"Content-Type": "application/json"}


def test_put_then_get_pipelines_of_a_dataset(http, api_user):
    Dataset.objects.create(name="acme-renewals", workspace=api_user_workspace(api_user))
    body = json.dumps(portal.pipelines_response())

    put = http.put("/datasets/acme-renewals/pipelines", content=body, headers=JSON)

    assert put.status_code == 200, put.text
    assert put.json()["updated_by"] == "api"
    got = http.get("/datasets/acme-renewals/pipelines").json()
    renewals = next(p for p in got["pipelines"] if p["id"] == portal.RENEWALS_ID)
    assert renewals["label"] == "Renewals"
    assert [s["id"] for s in renewals["stages"] if s["won"]] == ["1234568"]
    assert Dataset.objects.get(name="acme-renewals").pipelines == got["pipelines"]


def test_put_a_body_that_is_not_a_pipelines_response_is_400(http, api_user):
    Dataset.objects.create(name="acme-renewals", workspace=api_user_workspace(api_user))
    response = http.put(
        "/datasets/acme-renewals/pipelines", content=b'{"results": "nope"}', headers=JSON
    )

    assert response.status_code == 400
    assert "no list of pipelines" in response.json()["detail"]


def test_pipelines_of_an_unknown_dataset_are_404(http):
    assert http.get("/datasets/nope/pipelines").status_code == 404
    assert http.put("/datasets/nope/pipelines", content=b"{}", headers=JSON).status_code == 404


def api_user_workspace(user):
    from workspaces.access import workspaces_of

    return workspaces_of(user).first()


def test_a_nul_or_lone_surrogate_in_a_pipeline_is_kept_escaped(http, api_user):
    """Found by schemathesis (test_openapi.py): Postgres JSON cannot hold U+0000, and the
    pipelines were stored as sent, so this was a 500."""
    Dataset.objects.create(name="acme-renewals", workspace=api_user_workspace(api_user))
    body = {"results": [{"id": "p\u0000", "label": "Re\ud800", "stages": [{"id": "s\u0000"}]}]}

    put = http.put("/datasets/acme-renewals/pipelines", content=json.dumps(body), headers=JSON)

    assert put.status_code == 200, put.text
    [pipeline] = put.json()["pipelines"]
    assert (pipeline["id"], pipeline["label"]) == ("p\\u0000", "Re\\ud800")
    assert [stage["id"] for stage in pipeline["stages"]] == ["s\\u0000"]
