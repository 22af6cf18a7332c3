"""Undoing applied merges over the API (GET the dry run, POST the undo), staff only, each
undo once: the same end to end as test_undo.py, through /api/v1 and the loopback
HubSpot stand-in."""

from __future__ import annotations

import pytest

from reviews.apiauth.tokens import create_token
from reviews.models import AppliedMerge
from tests.connectors.test_undo import applied, creates, fingerprint_of  # noqa: F401

pytestmark = pytest.mark.django_db


def bearer(user, scopes=("read", "upload")) -> dict[str, str]:
    return {"Authorization": f"Bearer {create_token(user, 'undo', list(scopes)).secret}"}


def test_the_api_dry_runs_then_undoes_once(applied, client, django_user_model):  # noqa: F811
    portal, _, run, staff = applied
    url = f"/api/v1/runs/{run.pk}/merges/undo"
    auth = bearer(staff)
    dry = client.get(url, headers=auth)
    assert dry.status_code == 200, dry.content
    assert {s["outcome"] for s in dry.json()["steps"]} == {"would undo"}
    assert dry.json()["applied"] is False and creates(portal) == []

    fp = fingerprint_of("companies")
    done = client.post(url, {"fingerprints": [fp]}, content_type="application/json", headers=auth)
    assert done.status_code == 200, done.content
    (step,) = done.json()["steps"]
    row = AppliedMerge.objects.get(object_type="companies")
    assert step["outcome"] == "undone" and step["restored_id"] == row.restored_id != ""
    again = client.post(url, {"fingerprints": [fp]}, content_type="application/json", headers=auth)
    assert again.json()["steps"][0]["detail"].startswith("already undone")
    assert len(creates(portal)) == 1

    member = django_user_model.objects.create_user("member")
    refused = client.post(url, {}, content_type="application/json", headers=bearer(member))
    assert refused.status_code == 403 and len(creates(portal)) == 1
    unknown = client.post(
        url, {"fingerprints": ["nope"]}, content_type="application/json", headers=auth
    )
    assert unknown.status_code == 400 and "no merge of run" in unknown.json()["detail"]
    assert client.get(f"/api/v1/runs/{run.pk + 99}/merges/undo", headers=auth).status_code == 404
