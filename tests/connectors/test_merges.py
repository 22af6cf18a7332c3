"""Applying a run's merge plan through HubSpot (connectors.merges) against a
loopback stand-in of the merge endpoint: a dry run first, each pair merged once even
when a request is retried after a timeout, every answer recorded, staff only, and the
next pull of the CRM resolves the duplicate findings."""

from __future__ import annotations

from datetime import timedelta

import pytest

from connectors.hubspot.client import Limits
from connectors.hubspot.connector import HubSpotConnector
from connectors.merge_steps import dry_run
from connectors.merges import _claim, apply_merges
from connectors.write_access import MergeNotAllowed
from reviews.engine.ingest import UploadedFile
from reviews.models import AppliedMerge, Dataset, ReviewRun
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from tests.connectors.merge_standin import HubSpotStandIn
from tests.engine.ingest.hubspot_exports import AS_OF, BATCH, api_files

pytestmark = pytest.mark.django_db

TOKEN = "pat-test-0000"
PAIRS = {("companies", "9001", "9002"), ("contacts", "7001", "7004"), ("deals", "5001", "5002")}


PORTAL = "4512345"


def sync(batch: dict, as_of) -> ReviewRun:
    files = [UploadedFile(name, data) for name, data in api_files(batch)]
    run = submit(files, dispatch=False, no_cache=True, dataset="acme", as_of=as_of).run
    Dataset.objects.filter(name="acme").update(hubspot_portal_id=PORTAL)
    start_review.apply(kwargs={"run_id": run.pk})
    run.refresh_from_db()
    return run


def connect_acme(settings, url: str, token: str = TOKEN) -> None:
    """Dataset acme's HubSpot connection, with `token` sealed, to the stand-in at `url`."""
    from connectors import tokens
    from connectors.models import Connection

    settings.HUBSPOT_API_BASE_URL = url
    Connection.objects.update_or_create(
        dataset=Dataset.objects.get(name="acme"),
        defaults={"token_sealed": tokens.encrypt(token), "portal_id": PORTAL},
    )


@pytest.fixture
def run(postgres):
    return sync(BATCH, AS_OF)


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("ops", is_staff=True)


def pairs(steps) -> set[tuple[str, str, str]]:
    return {(s.object_type, s.primary_id, s.merged_id) for s in steps}


def test_the_dry_run_shows_each_merge_and_sends_nothing(run, staff):
    with HubSpotStandIn(BATCH, token=TOKEN) as hubspot:
        steps = dry_run(run, user=staff)
        assert pairs(steps) == PAIRS
        assert {s.outcome for s in steps} == {"would merge"}
        assert all(s.reason for s in steps)
        effects = {s.merged_id: s.effects for s in steps}
        assert 'loses name "Vertex Robotics GmbH" (keeps "Vertex Robotics")' in effects["9002"]
        assert effects["5002"].startswith("loses dealname")
        assert hubspot.requests == []
    assert AppliedMerge.objects.count() == 0


def test_the_pre_flight_reads_both_records_and_lists_what_the_survivor_loses(run, staff):
    with HubSpotStandIn(BATCH, token=TOKEN) as hubspot:
        hubspot.batch["companies"][1]["industry"] = "ROBOTICS"  # 9002's, read now
        steps = dry_run(run, user=staff, client=HubSpotConnector(hubspot.url, TOKEN))
        assert hubspot.requests == []  # read, nothing merged
    loses = {s.merged_id: s.loses for s in steps}
    assert 'name: "Vertex Robotics GmbH" (keeps "Vertex Robotics")' in loses["9002"]
    assert not any(line.startswith("industry") for line in loses["9002"])  # 9001 has none
    assert all(s.read_error == "" for s in steps)
    assert AppliedMerge.objects.count() == 0


def test_only_staff_apply_merges(run, django_user_model):
    member = django_user_model.objects.create_user("member")
    client = HubSpotConnector("http://127.0.0.1:9", TOKEN)
    with pytest.raises(MergeNotAllowed, match="staff"):
        apply_merges(run, None, user=member, client=client)
    with pytest.raises(MergeNotAllowed, match="staff"):
        dry_run(run, user=None)
    assert AppliedMerge.objects.count() == 0


def test_each_pair_is_merged_once_and_recorded_even_when_asked_twice(run, staff):
    with HubSpotStandIn(BATCH, token=TOKEN) as hubspot:
        client = HubSpotConnector(hubspot.url, TOKEN)
        first = apply_merges(run, None, user=staff, client=client)
        again = apply_merges(run, None, user=staff, client=client)
    assert pairs(first) == PAIRS and {s.outcome for s in first} == {"merged"}
    assert {s.outcome for s in again} == {"merged"}
    assert {s.detail for s in again} == {"already recorded: not sent again"}
    assert set(hubspot.merged) == PAIRS and len(hubspot.merged) == 3
    assert [body for _, body in hubspot.requests if body["objectIdToMerge"] == "9002"] == [
        {"primaryObjectId": "9001", "objectIdToMerge": "9002"}
    ]
    rows = AppliedMerge.objects.all()
    assert {(r.object_type, r.primary_id, r.merged_id) for r in rows} == PAIRS
    for row in rows:
        assert (row.status, row.requested_by, row.http_status) == ("merged", staff, 200)
        assert row.response["id"] == row.survivor_id and row.answered_at and row.reason
    # Companies and contacts survive as the primary; merged deals make a new deal.
    survivors = {r.object_type: (r.primary_id, r.survivor_id) for r in rows}
    assert survivors == {
        "companies": ("9001", "9001"),
        "contacts": ("7001", "7001"),
        "deals": ("5001", "5901"),
    }
    assert {s.object_type: s.survivor_id for s in first}["deals"] == "5901"


def test_a_merge_retried_after_a_timeout_is_not_sent_again(run, staff):
    with HubSpotStandIn(BATCH, token=TOKEN, slow_first_s=1.5) as hubspot:
        impatient = HubSpotConnector(hubspot.url, TOKEN, Limits(timeout_seconds=0.5))
        first = apply_merges(run, None, user=staff, client=impatient)
        retried = apply_merges(run, None, user=staff, client=HubSpotConnector(hubspot.url, TOKEN))
    timed_out = first[0]
    assert timed_out.outcome == "unknown" and "no answer" in timed_out.detail
    assert [s.outcome for s in first[1:]] == ["merged", "merged"]
    # The stand-in merged the first pair although its answer never arrived; the retry
    # leaves it alone (HubSpot's merges cannot be undone), so every pair merged once.
    assert retried[0].outcome == "unknown"
    assert sorted(hubspot.merged) == sorted(PAIRS) and len(hubspot.requests) == 3
    row = AppliedMerge.objects.get(merged_id=timed_out.merged_id)
    assert row.status == "unknown" and row.claimed_at is not None


class _NoPortalCheck(HubSpotConnector):
    check = None  # a client that cannot tell its portal: only merge() is called


def test_a_refused_merge_is_recorded_and_asked_again_only_by_name(run, staff):
    with HubSpotStandIn(BATCH, token=TOKEN) as hubspot:
        wrong = apply_merges(run, None, user=staff, client=_NoPortalCheck(hubspot.url, "nope"))
        assert {s.outcome for s in wrong} == {"failed"}
        assert set(AppliedMerge.objects.values_list("http_status", flat=True)) == {401}
        # Applying everything again does not resend them; the dry run says why.
        blind = apply_merges(run, None, user=staff, client=HubSpotConnector(hubspot.url, TOKEN))
        planned = dry_run(run, user=staff)
        named = [s.fingerprint for s in planned]
        fixed = apply_merges(run, named, user=staff, client=HubSpotConnector(hubspot.url, TOKEN))
    assert {s.outcome for s in blind} == {"refused"} and {s.outcome for s in planned} == {"refused"}
    assert "refused before: both records could not be read first" in blind[0].detail
    assert "401" in planned[0].detail and "sent again only when named" in planned[0].detail
    assert {s.outcome for s in fixed} == {"merged"}
    assert set(hubspot.merged) == PAIRS
    assert AppliedMerge.objects.filter(status="failed").count() == 3


def test_selected_merges_only(run, staff):
    [deals] = [s for s in dry_run(run, user=staff) if s.object_type == "deals"]
    with HubSpotStandIn(BATCH, token=TOKEN) as hubspot:
        apply_merges(
            run, [deals.fingerprint], user=staff, client=HubSpotConnector(hubspot.url, TOKEN)
        )
    assert hubspot.merged == [("deals", "5001", "5002")]
    with pytest.raises(MergeNotAllowed, match="not merges of run"):
        apply_merges(run, ["0" * 16], user=staff, client=HubSpotConnector(hubspot.url, TOKEN))


def test_one_claim_wins(run, staff):
    row = AppliedMerge.objects.create(
        dataset=run.batch.dataset, object_type="deals", primary_id="5001", merged_id="5002",
        requested_by=staff,
    )  # fmt: skip
    assert [_claim(row), _claim(row)] == [True, False]


def test_the_next_pull_resolves_the_merged_duplicates(run, staff):
    merge_fingerprints = {s.fingerprint for s in dry_run(run, user=staff)}
    with HubSpotStandIn(BATCH, token=TOKEN) as hubspot:
        apply_merges(run, None, user=staff, client=HubSpotConnector(hubspot.url, TOKEN))
    after = sync(hubspot.batch, AS_OF + timedelta(days=1))
    assert after.baseline_run_id == run.pk
    assert merge_fingerprints <= {entry["fingerprint"] for entry in after.resolved}
    assert not after.findings.filter(fingerprint__in=merge_fingerprints).exists()


def test_merges_are_paced(run, staff):
    with HubSpotStandIn(BATCH, token=TOKEN) as hubspot:
        client = HubSpotConnector(hubspot.url, TOKEN)
        apply_merges(run, None, user=staff, client=client, interval=0.3)
    gaps = [b - a for a, b in zip(hubspot.arrived, hubspot.arrived[1:], strict=False)]
    assert len(gaps) == 2 and min(gaps) >= 0.29


def test_merges_go_only_to_the_portal_the_dataset_syncs(run, staff):
    with HubSpotStandIn(BATCH, token=TOKEN, portal="999") as other:
        with pytest.raises(MergeNotAllowed, match="opens portal 999, dataset acme syncs portal"):
            apply_merges(run, None, user=staff, client=HubSpotConnector(other.url, TOKEN))
        with pytest.raises(MergeNotAllowed, match="cannot tell which HubSpot portal"):
            apply_merges(run, None, user=staff, client=HubSpotConnector(other.url, "nope"))
        Dataset.objects.filter(name="acme").update(hubspot_portal_id="")
        with pytest.raises(MergeNotAllowed, match="has no HubSpot portal id"):
            apply_merges(run, None, user=staff, client=HubSpotConnector(other.url, TOKEN))
        assert len(dry_run(run, user=staff)) == 3  # a dry run sends nothing: allowed
    assert other.requests == [] and AppliedMerge.objects.count() == 0
