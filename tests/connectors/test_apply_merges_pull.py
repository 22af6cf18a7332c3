"""Issue 27, end to end against the loopback HubSpot stand-in: a connected dataset is
pulled and reviewed, a staff member applies the run's merge plan through the dataset's
connection (one request answered only after the client's timeout, then asked again),
each pair is merged exactly once in the portal, and the next (incremental) pull
resolves the duplicate findings and drops the merged-away records from the snapshot."""

from __future__ import annotations

import json
import time

import pytest

from connectors import pulls
from connectors.merge_steps import dry_run
from connectors.merges import apply_merges
from connectors.models import Pull
from connectors.write_access import configured_client
from reviews.models import AppliedMerge, Dataset
from reviews.orchestration.run.tasks import start_review
from reviews.orchestration.store.parsed import stored_files
from tests.connectors.portals import problem_portal
from tests.connectors.standin import serving

pytestmark = pytest.mark.django_db
TOKEN = "pat-na1-good"
PAIRS = {("companies", "1", "2"), ("contacts", "11", "12")}


def pull_and_review(connection):
    pull = pulls.request_pull(connection, by="test")
    pull, submission = pulls.execute_pull(pull.pk, dispatch=False)
    assert pull.status == Pull.Status.DONE, pull.error
    start_review.apply(kwargs={"run_id": submission.run.pk})
    submission.run.refresh_from_db()
    return pull, submission.run


def snapshot_ids(pull) -> dict[str, set[str]]:
    (stored,) = [f for f in stored_files(pull.batch) if f.name == "hubspot-snapshot.json"]
    doc = json.loads(stored.data)
    return {kind: {str(o["id"]) for o in doc[kind]} for kind in ("companies", "contacts")}


def test_applied_merges_are_made_once_and_the_next_pull_resolves_them(
    postgres, settings, django_user_model
):
    portal = problem_portal(size=6)
    with serving(portal, settings):
        settings.HUBSPOT_TIMEOUT_SECONDS = 0.5
        connection = pulls.connect(Dataset.objects.create(name="acme-hubspot"), TOKEN)
        pull1, run1 = pull_and_review(connection)
        staff = django_user_model.objects.create_user("ops", is_staff=True)
        plan = dry_run(run1, user=staff)
        assert {(s.object_type, s.primary_id, s.merged_id) for s in plan} == PAIRS
        fingerprints = {s.fingerprint for s in plan}
        assert fingerprints <= set(run1.findings.values_list("fingerprint", flat=True))

        # HubSpot stamps the survivor as modified now, after the first pull began.
        portal.clock_ms = int(time.time() * 1000)
        # The account check and the first merge's snapshot (the properties, both records,
        # their contacts and deals) in time, then the first merge: late.
        portal.slow_next = [0.0] * 5 + [1.5]
        first = apply_merges(
            run1, None, user=staff, client=configured_client(run1.batch.dataset), interval=0
        )  # noqa: E501
        retried = apply_merges(
            run1, None, user=staff, client=configured_client(run1.batch.dataset), interval=0
        )
        merge_posts = [entry for entry in portal.log if entry[1].endswith("/merge")]

        connection.refresh_from_db()
        pull2, run2 = pull_and_review(connection)

    assert [s.outcome for s in first] == ["unknown", "merged"]
    assert "no answer" in first[0].detail
    assert {s.detail for s in retried} == {"already recorded: not sent again"}
    # The late answer's merge happened; the retry sent nothing: each pair merged once.
    assert sorted(portal.merges) == sorted(PAIRS) and len(merge_posts) == 2
    assert set(AppliedMerge.objects.values_list("status", flat=True)) == {"unknown", "merged"}
    assert "2" not in portal.objects["companies"] and "12" not in portal.objects["contacts"]

    assert pull2.kind == Pull.Kind.INCREMENTAL and pull2.removed == 2
    assert run2.baseline_run_id == run1.pk
    assert fingerprints <= {entry["fingerprint"] for entry in run2.resolved}
    assert not run2.findings.filter(fingerprint__in=fingerprints).exists()
    before, after = snapshot_ids(pull1), snapshot_ids(pull2)
    assert {"2", "1"} <= before["companies"] and {"11", "12"} <= before["contacts"]
    assert "2" not in after["companies"] and "12" not in after["contacts"]
    assert "1" in after["companies"] and "11" in after["contacts"]
