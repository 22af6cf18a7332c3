"""The staff page and the CLI that apply a run's merges in HubSpot, against the
loopback stand-in of the merge endpoint: a dry run first, a confirmation, staff only."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from reviews.models import AppliedMerge
from tests.connectors.merge_standin import HubSpotStandIn
from tests.connectors.test_merges import PAIRS, TOKEN, connect_acme, sync
from tests.engine.ingest.hubspot_exports import AS_OF, BATCH

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(postgres):
    return sync(BATCH, AS_OF)


@pytest.fixture
def hubspot(settings, run):
    with HubSpotStandIn(BATCH, token=TOKEN) as stand_in:
        connect_acme(settings, stand_in.url)
        yield stand_in


def test_members_cannot_reach_the_page(member_client, run):
    url = reverse("reviews:apply_merges", args=[run.pk])
    assert member_client.get(url).status_code == 403
    assert member_client.post(url, {"confirm": "1"}).status_code == 403
    page = member_client.get(reverse("reviews:run", args=[run.pk])).content.decode()
    assert url not in page


def test_staff_see_the_dry_run_then_apply_the_ticked_merges(admin_client, run, hubspot):
    url = reverse("reviews:apply_merges", args=[run.pk])
    assert url in admin_client.get(reverse("reviews:run", args=[run.pk])).content.decode()
    page = admin_client.get(url).content.decode()
    for _, _, merged in PAIRS:
        assert f'data-merged="{merged}" data-outcome="would merge"' in page
    # The pre-flight: both records read from HubSpot now, what the survivor would lose.
    assert "HubSpot now: loses name: &quot;Vertex Robotics GmbH&quot;" in page
    fingerprints = [
        m["fingerprint"] for m in call_json(run) if m["object"] in ("companies", "deals")
    ]
    refused = admin_client.post(url, {"fingerprint": fingerprints})
    assert refused.status_code == 400 and hubspot.requests == []
    done = admin_client.post(url, {"fingerprint": fingerprints, "confirm": "1"})
    assert done.status_code == 200
    assert set(hubspot.merged) == {p for p in PAIRS if p[0] != "contacts"}
    assert 'data-merged="9002" data-outcome="merged"' in done.content.decode()
    # The merged deals are a new deal in HubSpot: its id is shown beside the survivor.
    assert 'now <span class="rid">5901</span>' in done.content.decode()
    after = admin_client.get(url).content.decode()
    assert 'data-merged="9002" data-outcome="merged"' in after  # recorded: no checkbox
    assert AppliedMerge.objects.filter(status="merged").count() == 2


def call_json(run) -> list[dict]:
    out = io.StringIO()
    call_command("fix_plan", "--run", str(run.pk), "--kind", "merges", stdout=out)
    return json.loads(out.getvalue())["merges"]


def apply_cli(*args: str) -> str:
    out = io.StringIO()
    call_command("apply_merges", *args, stdout=out)
    return out.getvalue()


def test_cli_dry_runs_by_default_and_applies_with_a_staff_user(run, hubspot, django_user_model):
    django_user_model.objects.create_user("ops", is_staff=True)
    django_user_model.objects.create_user("member")
    shown = apply_cli("--run", str(run.pk), "--user", "ops")
    assert "deals 5002 -> 5001: would merge" in shown and hubspot.requests == []
    assert '  loses name: "Vertex Robotics GmbH" (keeps "Vertex Robotics")' in shown
    with pytest.raises(CommandError, match="staff"):
        apply_cli("--run", str(run.pk), "--user", "member", "--apply")
    sent = apply_cli("--run", str(run.pk), "--user", "ops", "--apply")
    assert sent.count(": merged") == 3 and set(hubspot.merged) == PAIRS
    assert "deals 5002 -> 5001 (now 5901): merged" in sent
    again = apply_cli("--run", str(run.pk), "--user", "ops", "--apply")
    assert again.count("already recorded") == 3 and len(hubspot.requests) == 3


def test_cli_apply_needs_a_connection(run, settings, django_user_model):
    django_user_model.objects.create_user("ops", is_staff=True)
    with pytest.raises(CommandError, match="no HubSpot or Salesforce connection"):
        apply_cli("--run", str(run.pk), "--user", "ops", "--apply")
