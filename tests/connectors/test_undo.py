"""Issue 38, end to end against the loopback HubSpot stand-in: a run's merges are applied
(each record read whole first), one is undone (a dry run first), the recreated company
carries its properties and associations again under a new id, a second undo sends
nothing, and the next pull lists it. An undo HubSpot refuses is recorded with its
message and never asked again by a rerun of everything."""

from __future__ import annotations

import io
import time

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from connectors import pulls
from connectors.merges import apply_merges
from connectors.models import Pull
from connectors.undo import CANNOT, undo_dry_run, undo_merges
from connectors.write_access import MergeNotAllowed, configured_client
from reviews.models import AppliedMerge, Dataset
from tests.connectors.portals import problem_portal
from tests.connectors.standin import serving
from tests.connectors.test_apply_merges_pull import TOKEN, pull_and_review, snapshot_ids

pytestmark = pytest.mark.django_db


def creates(portal) -> list[str]:
    """The paths of the record creates the portal was sent."""
    return [p for p, _ in portal.bodies if p.count("/") == 4 and p.startswith("/crm/v3/objects")]


def portal_with_more():
    portal = problem_portal(size=4)
    portal.put("companies", "2", {"industry": "ROBOTICS", "city": "Linz", "phone": "+43 1"})
    deal = {"dealname": "Vertex pilot", "amount": "8000", "pipeline": "default",
            "dealstage": "qualifiedtobuy", "deal_currency_code": "EUR",
            "closedate": "2027-04-30T00:00:00Z", "hubspot_owner_id": "901"}  # fmt: skip
    portal.put("deals", "25", deal)
    portal.link("deals", "25", "companies", "2", primary=True)
    return portal


@pytest.fixture
def applied(postgres, settings, django_user_model):
    """(portal, settings, connection, run, staff) after run 1's merges were applied."""
    portal = portal_with_more()
    with serving(portal, settings):
        connection = pulls.connect(Dataset.objects.create(name="acme-hubspot"), TOKEN)
        _, run = pull_and_review(connection)
        staff = django_user_model.objects.create_user("ops", is_staff=True)
        portal.clock_ms = int(time.time() * 1000)  # HubSpot's clock: now
        steps = apply_merges(run, None, user=staff, client=configured_client(run.batch.dataset))
        assert {s.outcome for s in steps} == {"merged"}
        yield portal, connection, run, staff


def fingerprint_of(object_type: str) -> str:
    return AppliedMerge.objects.get(object_type=object_type).fingerprint


def test_a_merge_keeps_both_records_read_whole_just_before_it_is_sent(applied):
    portal, _, _, _ = applied
    row = AppliedMerge.objects.get(object_type="companies")
    merged, primary = row.snapshot["merged"], row.snapshot["primary"]
    assert (merged["id"], primary["id"]) == ("2", "1")
    assert merged["properties"]["name"] == "Vertex Robotics LLC"
    assert merged["properties"]["industry"] == "ROBOTICS"
    assert "hs_object_id" in merged["read_only"]
    assert [link["id"] for link in merged["associations"]["contacts"]] == ["12"]
    assert merged["associations"]["deals"] == [
        {"id": "25",
         "types": [{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": 342}],
         "primary_types": [{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": 6}]}
    ]  # fmt: skip
    # Read before the merge: the snapshot reads come before the merge request.
    paths = [p for p, _ in portal.bodies]
    assert paths.index("/crm/v3/objects/companies/batch/read") < paths.index(
        "/crm/v3/objects/companies/merge"
    )


def test_undo_makes_the_company_again_once_and_the_next_pull_lists_it(applied):
    portal, connection, run, staff = applied
    fp = fingerprint_of("companies")
    (planned,) = undo_dry_run(run, [fp], user=staff)
    assert creates(portal) == []  # the dry run sends nothing
    client = configured_client(run.batch.dataset)
    (step,) = undo_merges(run, [fp], user=staff, client=client)
    again = undo_merges(run, [fp], user=staff, client=client)
    sent = len(creates(portal))
    connection.refresh_from_db()
    pull, _ = pull_and_review(connection)

    assert (planned.outcome, planned.merged_id) == ("would undo", "2")
    assert planned.restores == "5 values, 1 deals, 1 contacts"
    assert planned.cannot.startswith(CANNOT) and "createdate" in planned.cannot
    assert step.outcome == "undone" and step.restored_id not in ("", "1", "2")
    new = portal.objects["companies"][step.restored_id]["properties"]
    assert new["name"] == "Vertex Robotics LLC" and new["domain"] == "vertexrobotics.example"
    assert (new["industry"], new["city"], new["phone"]) == ("ROBOTICS", "Linz", "+43 1")
    # Its contact (merged into 11 since) and its deal point at it again, the deal's primary.
    assert (step.restored_id, True) in portal.links[("deals", "companies")]["25"]
    assert any(t == step.restored_id for t, _ in portal.links[("contacts", "companies")]["11"])
    assert "2 associations made" in step.detail

    assert [s.outcome for s in again] == ["undone"] and sent == 1  # a second undo: nothing
    row = AppliedMerge.objects.get(object_type="companies")
    assert (row.undo_status, row.restored_id, row.undone_by) == ("undone", step.restored_id, staff)
    assert row.undo_detail["associations"] == 2 and row.undo_detail["refused"] == []

    assert pull.status == Pull.Status.DONE and pull.kind == Pull.Kind.INCREMENTAL
    assert step.restored_id in snapshot_ids(pull)["companies"]


def test_an_undo_hubspot_refuses_is_recorded_and_not_asked_again_blindly(applied):
    portal, _, run, staff = applied
    fp = fingerprint_of("contacts")
    client = configured_client(run.batch.dataset)
    (refused,) = undo_merges(run, [fp], user=staff, client=client)
    rerun = undo_merges(run, None, user=staff, client=client)
    sent_after_rerun = [p for p in creates(portal) if p.endswith("/contacts")]
    (named,) = undo_merges(run, [fp], user=staff, client=client)
    sent = [p for p in creates(portal) if p.endswith("/contacts")]
    # The survivor holds the contact's email: HubSpot refuses a second contact with it.
    assert (
        refused.outcome == "failed" and "Contact already exists. Existing ID: 11" in refused.detail
    )
    row = AppliedMerge.objects.get(object_type="contacts")
    assert row.undo_status == "failed" and row.undo_detail["response"]["category"] == "CONFLICT"
    contact_step = next(s for s in rerun if s.object_type == "contacts")
    assert contact_step.outcome == "failed" and "name it to ask again" in contact_step.detail
    assert len(sent_after_rerun) == 1  # the rerun of everything did not resend it
    assert named.outcome == "failed" and len(sent) == 2  # named: asked again, refused again


def test_only_staff_undo_and_only_merges_of_the_run(applied, django_user_model):
    _, _, run, _ = applied
    member = django_user_model.objects.create_user("member")
    with pytest.raises(MergeNotAllowed, match="staff"):
        undo_dry_run(run, user=member)
    staff = django_user_model.objects.get(username="ops")
    with pytest.raises(MergeNotAllowed, match="no merge of run"):
        undo_dry_run(run, ["0123456789abcdef"], user=staff)


def undo_command(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("undo_merges", *args, stdout=out)
    except CommandError as error:
        return error.returncode, out.getvalue() + str(error)
    return 0, out.getvalue()


def test_the_command_dry_runs_then_undoes_by_fingerprint(applied, django_user_model):
    portal, _, run, _ = applied
    fp = fingerprint_of("companies")
    django_user_model.objects.create_user("member")
    assert undo_command("--run", str(run.pk), "--user", "member")[0] == 2
    code, dry = undo_command("--run", str(run.pk), "--user", "ops", "--fingerprint", fp)
    assert code == 0 and "companies 2 (merged into 1): would undo; restores 5 values" in dry
    assert "cannot bring back: activities and engagement history" in dry
    assert creates(portal) == []
    code, done = undo_command("--run", str(run.pk), "--user", "ops", "--fingerprint", fp, "--apply")
    restored = AppliedMerge.objects.get(object_type="companies").restored_id
    assert code == 0 and f"(now {restored}): undone [2 associations made]" in done
    code, again = undo_command("--run", str(run.pk), "--user", "ops", "--apply")
    # The company: undone already; the contact: refused by HubSpot (exit 1).
    assert code == 1 and "already undone" in again and "Contact already exists" in again
    assert len(creates(portal)) == 2


def test_the_dataset_page_lists_applied_merges_with_undo(applied, client, django_user_model):
    portal, connection, run, staff = applied
    url = reverse("reviews:applied_merges", args=[connection.dataset.name])
    member = django_user_model.objects.create_user("member")
    client.force_login(member)
    assert client.get(url).status_code == 403
    client.force_login(staff)
    page = client.get(url).content.decode()
    assert 'data-merged="2" data-undo="none"' in page and "5 values, 1 deals" in page
    assert "activities and engagement history" in page
    fp = fingerprint_of("companies")
    unconfirmed = client.post(url, {"run": run.pk, "fingerprint": fp})
    assert unconfirmed.status_code == 400 and creates(portal) == []
    done = client.post(url, {"run": run.pk, "fingerprint": fp, "confirm": "1"})
    restored = AppliedMerge.objects.get(object_type="companies").restored_id
    assert done.status_code == 200 and restored
    assert 'data-merged="2" data-undo="undone"' in done.content.decode()
    assert f'now <span class="rid">{restored}</span>' in done.content.decode()
    client.post(url, {"run": run.pk, "fingerprint": fp, "confirm": "1"})
    assert len(creates(portal)) == 1  # undone once
