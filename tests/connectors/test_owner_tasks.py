"""Owners' tasks into HubSpot (issue 38), end to end against the loopback stand-in: a
connected dataset is pulled and reviewed; a staff member's dry run lists a task per
to-do item and sends nothing; approving creates one HubSpot task per finding, on its
record, with HubSpot's association type and the owner when the pull names them by id;
approving again (the same run, or the next sync's) creates none; a finding the next
sync resolved says so beside its task."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from connectors import pulls
from connectors.models import Pull, SentTask
from connectors.owner_tasks import dry_run, send_tasks
from connectors.write_access import MergeNotAllowed, configured_client
from reviews.models import Dataset, ReviewRun
from reviews.orchestration.run.tasks import start_review
from tests.connectors.portals import problem_portal
from tests.connectors.standin import serving
from tests.connectors.task_standin import TYPES

pytestmark = pytest.mark.django_db
TOKEN = "pat-na1-good"


def pull_and_review(connection):
    pull = pulls.request_pull(connection, by="test")
    pull, submission = pulls.execute_pull(pull.pk, dispatch=False)
    assert pull.status == Pull.Status.DONE, pull.error
    start_review.apply(kwargs={"run_id": submission.run.pk})
    submission.run.refresh_from_db()
    return submission.run


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("ops", is_staff=True)


def test_approving_the_to_do_list_makes_one_task_per_finding_once(settings, staff):
    portal = problem_portal(size=6)
    with serving(portal, settings):
        connection = pulls.connect(Dataset.objects.create(name="acme-hubspot"), TOKEN)
        run = pull_and_review(connection)
        plan = dry_run(run, user=staff)
        assert plan and {s.outcome for s in plan} == {"would create"}
        assert portal.tasks == {} and not SentTask.objects.exists()

        client = configured_client(run.batch.dataset)
        sent = send_tasks(run, user=staff, client=client)
        assert {s.outcome for s in sent} == {"created"}
        assert len(portal.tasks) == len(plan) == SentTask.objects.count()
        made = {s.task_id: s.task for s in sent}
        for task_id, task in made.items():
            created = portal.tasks[task_id]
            assert created["associations"] == [(task.object, task.record_id)]
            properties = created["properties"]
            assert properties["hs_task_subject"].startswith("Fix: ")
            assert task.fingerprint in properties["hs_task_body"]
            assert properties["hs_task_status"] == "NOT_STARTED" and properties["hs_timestamp"]
            expected = task.owner if task.owner and task.owner.isdigit() else None
            assert properties.get("hubspot_owner_id") == expected
        posts = [b for path, b in portal.bodies if path == "/crm/v3/objects/tasks"]
        assert {b["associations"][0]["types"][0]["associationTypeId"] for b in posts} <= set(TYPES)

        again = send_tasks(run, user=staff, client=configured_client(run.batch.dataset))
        assert {s.outcome for s in again} == {"created"}  # as recorded, not sent again
        assert all(s.detail == "already sent: not sent again" for s in again)
        assert len(portal.tasks) == len(plan)

        # The next sync of the same CRM: its findings keep their fingerprints.
        later = pull_and_review(connection)
        send_tasks(later, user=staff, client=configured_client(later.batch.dataset))
        assert len(portal.tasks) == len(plan) == SentTask.objects.count()


def test_only_staff_send_tasks_and_a_refusal_is_recorded_never_blindly_resent(
    settings, staff, django_user_model
):
    portal = problem_portal(size=6)
    with serving(portal, settings):
        connection = pulls.connect(Dataset.objects.create(name="acme-hubspot"), TOKEN)
        run = pull_and_review(connection)
        member = django_user_model.objects.create_user("member")
        with pytest.raises(MergeNotAllowed, match="staff"):
            send_tasks(run, user=member, client=configured_client(run.batch.dataset))

        portal.task_failures = [400, 503]  # HubSpot refuses one, fails on the next
        steps = send_tasks(run, user=staff, client=configured_client(run.batch.dataset))
        first, second = steps[:2]
        assert (first.outcome, second.outcome) == ("failed", "unknown")
        assert all(s.outcome == "created" for s in steps[2:])
        assert "HubSpot answered 400" in first.detail
        retried = send_tasks(run, user=staff, client=configured_client(run.batch.dataset))
        outcomes = {s.task.fingerprint: s.outcome for s in retried}
        assert outcomes[first.task.fingerprint] == "created"  # refused: may be asked again
        assert outcomes[second.task.fingerprint] == "unknown"  # maybe made: never resent
        assert len(portal.tasks) == len(steps) - 1


def test_a_finding_a_later_sync_resolved_says_so_and_is_not_sent(
    staff, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_samples", stdout=io.StringIO())  # samples/syncs/northwind
    first, second = ReviewRun.objects.filter(batch__dataset__name="northwind").order_by("pk")
    steps = {s.task.record_id: s for s in dry_run(first, user=staff)}
    # 6101002 got its amount in the second sync (samples/README.md).
    assert (steps["6101002"].outcome, steps["6101002"].resolved_in) == ("resolved", second.pk)
    assert {s.outcome for r, s in steps.items() if r != "6101002"} == {"would create"}
    with pytest.raises(MergeNotAllowed, match="HubSpot portal id"):  # not connected
        send_tasks(first, user=staff, client=None)


def test_the_command_dry_runs_then_sends_once(settings, staff):
    portal = problem_portal(size=6)
    with serving(portal, settings):
        connection = pulls.connect(Dataset.objects.create(name="acme-hubspot"), TOKEN)
        run = pull_and_review(connection)
        out = io.StringIO()
        call_command("send_tasks", "--run", str(run.pk), "--user", "ops", stdout=out)
        assert "would create" in out.getvalue() and portal.tasks == {}
        call_command("send_tasks", "--run", str(run.pk), "--user", "ops", "--apply", stdout=out)
        made = len(portal.tasks)
        assert made and out.getvalue().count(": created ") == made
        call_command("send_tasks", "--run", str(run.pk), "--user", "ops", "--apply", stdout=out)
        assert len(portal.tasks) == made and "already sent: not sent again" in out.getvalue()
