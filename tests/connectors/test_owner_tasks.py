"""Issue 38, owners' tasks into HubSpot, end to end against the loopback stand-in: a
staff member approves a run's to-do list (or one owner's part of it) and each finding
becomes one HubSpot task on its record, with its owner and due date; approving again
creates none; a later sync that no longer has a finding says so beside its task."""

from __future__ import annotations

import io
import time
from datetime import UTC, date, datetime

import pytest
from django.core.management import CommandError, call_command

from connectors import pulls
from connectors.merges import MergeNotAllowed, configured_client
from connectors.owner_tasks import dry_run_tasks, send_tasks
from reviews.models import Dataset, SentTask
from tests.connectors.portals import problem_portal
from tests.connectors.standin import serving
from tests.connectors.test_apply_merges_pull import TOKEN, pull_and_review

pytestmark = pytest.mark.django_db
DUE = date(2027, 1, 15)


@pytest.fixture
def reviewed(postgres, settings, django_user_model):
    """(portal, connection, run, staff) after one pull, reviewed."""
    portal = problem_portal(size=2)
    portal.put("deals", "23", {"hubspot_owner_id": "902"})  # another owner's task
    with serving(portal, settings):
        connection = pulls.connect(Dataset.objects.create(name="acme-hubspot"), TOKEN)
        _, run = pull_and_review(connection)
        staff = django_user_model.objects.create_user("ops", is_staff=True)
        portal.clock_ms = int(time.time() * 1000)
        yield portal, connection, run, staff


def test_approving_the_to_do_list_creates_one_task_per_finding_once(reviewed):
    portal, connection, run, staff = reviewed
    planned = dry_run_tasks(run, user=staff, due=DUE)
    assert planned and {s.outcome for s in planned} == {"would create"}
    assert portal.tasks == {}  # the dry run sends nothing
    client = configured_client(run.batch.dataset)
    sent = send_tasks(run, None, user=staff, client=client, due=DUE)
    again = send_tasks(run, None, user=staff, client=client, due=DUE)

    assert {s.outcome for s in sent} == {"created"} and len(portal.tasks) == len(planned)
    assert {s.outcome for s in again} == {"created"} and len(portal.tasks) == len(planned)
    assert {s.detail for s in again} == {"already recorded: not sent again"}
    rows = SentTask.objects.all()
    assert {r.fingerprint for r in rows} == {s.fingerprint for s in planned}
    assert {r.task_id for r in rows} == set(portal.tasks)
    stale = next(s for s in sent if s.record_id == "21")  # open past its close date
    task = portal.tasks[stale.task_id]
    assert task["associations"] == [("deals", "21")]
    props = task["properties"]
    assert props["hs_task_subject"] == stale.subject and props["hubspot_owner_id"] == "901"
    assert "past its close date" in stale.subject and "closedate" in props["hs_task_body"]
    assert props["hs_timestamp"] == str(
        int(datetime(2027, 1, 15, 12, tzinfo=UTC).timestamp()) * 1000
    )
    assert props["hs_task_status"] == "NOT_STARTED" and stale.fingerprint in props["hs_task_body"]

    # The owner moves the close date; the next sync no longer has the finding.
    portal.put("deals", "21", {"closedate": "2027-06-30T00:00:00Z"})
    pull_and_review(connection)
    after = {s.fingerprint: s for s in dry_run_tasks(run, user=staff, due=DUE)}
    assert after[stale.fingerprint].resolved.startswith("resolved by run ")
    assert sum(1 for s in after.values() if s.resolved) == 1


def test_one_owners_part_only_and_staff_only(reviewed, django_user_model):
    portal, _, run, staff = reviewed
    everyone = dry_run_tasks(run, user=staff)
    owned = [s for s in everyone if s.owner_id == "901"]
    client = configured_client(run.batch.dataset)
    sent = send_tasks(run, None, owner="901", user=staff, client=client)
    assert len(sent) == len(owned) < len(everyone) and len(portal.tasks) == len(owned)
    member = django_user_model.objects.create_user("member")
    with pytest.raises(MergeNotAllowed, match="staff"):
        send_tasks(run, None, user=member, client=client)
    with pytest.raises(MergeNotAllowed, match="not tasks of run"):
        dry_run_tasks(run, ["0" * 16], user=staff)


def test_a_task_hubspot_refuses_is_recorded_and_sent_again_only_by_name(reviewed):
    portal, _, run, staff = reviewed
    (first, *_) = dry_run_tasks(run, user=staff)
    # The record is gone from HubSpot: it refuses a task associated with it.
    held = portal.objects[first.object_type].pop(first.record_id)
    client = configured_client(run.batch.dataset)
    refused = send_tasks(run, [first.fingerprint], user=staff, client=client)
    rerun = send_tasks(run, None, user=staff, client=client)
    portal.objects[first.object_type][first.record_id] = held
    named = send_tasks(run, [first.fingerprint], user=staff, client=client)
    assert refused[0].outcome == "failed" and "(400): Invalid association" in refused[0].detail
    skipped = next(s for s in rerun if s.fingerprint == first.fingerprint)
    assert skipped.outcome == "refused" and "sent again only when named" in skipped.detail
    assert named[0].outcome == "created"
    assert len(portal.tasks) == len(rerun)  # every other once, the refused one once now


def test_the_command_dry_runs_then_sends(reviewed):
    portal, _, run, _ = reviewed
    out = io.StringIO()
    call_command("send_tasks", "--run", str(run.pk), "--user", "ops", "--due", "2027-01-15",
                 stdout=out)  # fmt: skip
    assert "deals 21: would create: " in out.getvalue() and "owner 901, due 2027-01-15" in (
        out.getvalue()
    )
    assert portal.tasks == {}
    call_command("send_tasks", "--run", str(run.pk), "--user", "ops", "--apply", stdout=out)
    made = len(portal.tasks)
    call_command("send_tasks", "--run", str(run.pk), "--user", "ops", "--apply", stdout=out)
    assert made and len(portal.tasks) == made
    with pytest.raises(CommandError, match="not a YYYY-MM-DD"):
        call_command("send_tasks", "--run", str(run.pk), "--user", "ops", "--due", "soon")
