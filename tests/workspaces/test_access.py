"""Roles within a workspace, tokens that act for one, datasets named per workspace,
webhooks that hear only of their workspace, and reviews never served across teams."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from alerts.delivery import create_deliveries
from alerts.models import WebhookDelivery, WebhookSubscription
from reviews.apiauth.tokens import create_token
from reviews.models import Dataset, ReviewRun
from reviews.orchestration.intake.submit import submit
from tests.uploads import upload
from tests.workspaces.conftest import A_DATASET, reviewed_in
from workspaces.access import workspaces_of
from workspaces.models import Membership, Role, Workspace

pytestmark = [pytest.mark.django_db, pytest.mark.own_workspaces]


@pytest.fixture
def viewer(world, django_user_model):
    user = django_user_model.objects.create_user("vera", password="vera-pass-123")
    Membership.objects.create(workspace=world.a, user=user, role=Role.VIEWER)
    return user


def test_a_viewer_reads_but_cannot_rerun_dismiss_or_upload(world, viewer, client):
    client.force_login(viewer)
    run = world.run_a
    assert client.get(f"/runs/{run.pk}/").status_code == 200
    assert client.get(f"/runs/{run.pk}/findings.csv").status_code == 200
    assert b"Re-run (fresh)" not in client.get(f"/runs/{run.pk}/").content
    assert client.post(f"/runs/{run.pk}/rerun/").status_code == 403
    dismiss = f"/runs/{run.pk}/findings/{world.finding_a.pk}/dismiss/"
    assert client.post(dismiss, {"reason": "no"}).status_code == 403
    response = client.post("/", {"files": [_file()]})
    assert response.status_code == 403
    assert ReviewRun.objects.count() == 2  # nothing re-run, nothing uploaded


def _file():
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("seed.json", upload("seed-example.json").data)


def test_a_viewer_gets_a_read_token_only(world, viewer):
    assert create_token(viewer, "reader", ["read"]).token.workspace == world.a
    with pytest.raises(ValueError, match="needs the reviewer role"):
        create_token(viewer, "writer", ["read", "upload"])


def test_a_token_of_a_user_removed_from_its_workspace_stops_working(world, client):
    headers = {"Authorization": f"Bearer {world.secrets['alice']}"}
    assert client.get(f"/api/v1/runs/{world.run_a.pk}", headers=headers).status_code == 200
    Membership.objects.filter(user=world.alice).update(role=Role.VIEWER)
    response = client.post(f"/api/v1/runs/{world.run_a.pk}/rerun", headers=headers)
    assert response.status_code == 403  # demoted: reads still, uploads no more
    Membership.objects.filter(user=world.alice).delete()
    assert client.get(f"/api/v1/runs/{world.run_a.pk}", headers=headers).status_code == 403


def test_a_user_in_several_workspaces_names_the_tokens(world):
    Membership.objects.create(workspace=world.b, user=world.alice, role=Role.VIEWER)
    with pytest.raises(ValueError, match="several workspaces"):
        create_token(world.alice, "which one")
    assert create_token(world.alice, "b reader", ["read"], workspace=world.b).token.workspace_id


def test_a_user_with_several_workspaces_chooses_on_the_upload_form(world, client):
    Membership.objects.create(workspace=world.b, user=world.alice, role=Role.REVIEWER)
    client.force_login(world.alice)
    page = client.get("/upload/").content.decode()
    assert 'name="workspace"' in page and "beta team" in page and "<select" in page
    response = client.post("/", {"files": [_file()], "workspace": world.b.pk})
    assert response.status_code == 302
    run = ReviewRun.objects.get(pk=int(response["Location"].strip("/").split("/")[-1]))
    assert run.batch.workspace == world.b


def test_dataset_names_are_unique_per_workspace_not_globally(world):
    same = reviewed_in(world.b, A_DATASET)  # B's own dataset of A's name
    assert same.batch.dataset != world.run_a.batch.dataset
    assert Dataset.objects.filter(name=A_DATASET).count() == 2
    # B's history is its own: its first sync, not compared with A's.
    assert same.baseline_run_id is None
    with pytest.raises(IntegrityError), transaction.atomic():
        Dataset.objects.create(workspace=world.a, name=A_DATASET)


def test_the_dataset_page_and_api_of_a_shared_name_show_each_their_own(world, client):
    same = reviewed_in(world.b, A_DATASET)
    client.force_login(world.bob)
    page = client.get(f"/datasets/{A_DATASET}/").content.decode()
    assert f"/runs/{same.pk}/" in page and f"/runs/{world.run_a.pk}/" not in page
    assert client.get(f"/datasets/{A_DATASET}/?workspace={world.a.pk}").status_code == 404
    headers = {"Authorization": f"Bearer {world.secrets['bob']}"}
    runs = client.get(f"/api/v1/datasets/{A_DATASET}", headers=headers).json()["runs"]
    assert [r["id"] for r in runs] == [same.pk]
    # A superuser sees both: the run page links to its own workspace's dataset.
    client.force_login(world.root)
    link = f"/datasets/{A_DATASET}/?workspace={world.b.pk}"
    assert f'href="{link}"' in client.get(f"/runs/{same.pk}/").content.decode()
    assert f"/runs/{same.pk}/" in client.get(link).content.decode()


def test_webhooks_fire_only_for_their_workspaces_runs(world):
    # B subscribes to its own dataset of A's name: A's runs never reach it.
    same = reviewed_in(world.b, A_DATASET)
    WebhookDelivery.objects.all().delete()
    spy = WebhookSubscription.objects.create(
        dataset=same.batch.dataset,
        url="https://b.example/",
        secret="s",
        triggers=["approve", "approve_with_comments", "request_changes"],
    )
    made = create_deliveries(world.run_a.pk)
    assert WebhookDelivery.objects.filter(pk__in=made).get().subscription == world.hook_a
    assert not WebhookDelivery.objects.filter(subscription=spy).exists()


def test_a_review_is_never_served_from_another_workspaces_cache(world):
    first = reviewed_in(world.a, None)  # no dataset: the same content is the same review
    again_a = submit([upload("seed-example.json")], dispatch=False, workspace=world.a).run
    in_b = submit([upload("seed-example.json")], dispatch=False, workspace=world.b).run
    assert (again_a.mode, again_a.reused_run_id) == (ReviewRun.Mode.CACHED, first.pk)
    assert (in_b.mode, in_b.reused_run_id) == (ReviewRun.Mode.FRESH, None)


def test_nobody_is_a_member_of_anything_by_default(django_user_model):
    user = django_user_model.objects.create_user("newbie", password="newbie-pass-1")
    assert list(workspaces_of(user)) == []
    assert Workspace.objects.filter(members=user).count() == 0


def test_spend_by_workspace_and_in_total(world):
    from io import StringIO

    from django.core.management import call_command

    from ledger import reports
    from tests.workspaces.conftest import A_AGENT

    total = reports.spend_report(1)
    assert dict(total.by_workspace)["alpha team"].calls == 1
    only_b = reports.spend_report(1, workspaces=[world.b.pk])
    assert only_b.total.usage.calls == 0 and only_b.total.runs == 1  # B's own run
    out = StringIO()
    call_command("spend", "--days", "1", "--workspace", "beta team", stdout=out)
    assert A_AGENT not in out.getvalue()
    out = StringIO()
    call_command("spend", "--days", "1", stdout=out)
    assert A_AGENT in out.getvalue() and "alpha team" in out.getvalue()


def test_an_idempotency_key_never_replays_another_workspaces_run(world, client):
    Membership.objects.create(workspace=world.b, user=world.alice, role=Role.REVIEWER)
    in_b = create_token(world.alice, "alice in b", workspace=world.b).secret
    body = upload("seed-example.json").data

    def send(secret):
        headers = {"Authorization": f"Bearer {secret}", "Idempotency-Key": "night-1"}
        return client.post(
            "/api/v1/batches", body, content_type="application/json", headers=headers
        )

    first = send(world.secrets["alice"])
    assert first.status_code == 202
    again = send(in_b)
    assert again.status_code == 422 and "another workspace" in again.json()["detail"]
    assert send(world.secrets["alice"]).json()["run_id"] == first.json()["run_id"]


def test_an_upload_kept_in_the_spool_lands_in_its_workspace_if_its_user_may(
    world, viewer, settings, tmp_path
):
    from reviews.models import Batch
    from reviews.orchestration.intake.spool_import import import_spool
    from reviews.orchestration.intake.submit import as_source
    from reviews.orchestration.store import spool

    settings.SPOOL_DIR = tmp_path / "spool"
    data = [as_source(upload("seed-example.json"))]
    for user, workspace in [(world.alice, world.a), (world.bob, world.a), (viewer, world.a)]:
        spool.spool_upload(
            data, channel="form", user_id=user.pk, error="down", workspace_id=workspace.pk
        )
    import_spool()
    spooled = Batch.objects.exclude(pk__in=[world.run_a.batch_id, world.run_b.batch_id])
    where = {b.created_by.username: (b.workspace.name, b.status) for b in spooled}
    assert where == {
        "alice": ("alpha team", Batch.Status.ACCEPTED),
        "bob": ("beta team", Batch.Status.REJECTED),  # not in A: kept in his own, rejected
        "vera": ("alpha team", Batch.Status.REJECTED),  # a viewer may not upload
    }
    refused = spooled.filter(status=Batch.Status.REJECTED)
    assert all("may not upload to that workspace" in b.errors[0] for b in refused)


def test_a_workspace_past_its_own_daily_budget_is_served_by_failback(world, settings):
    from ledger.models import LedgerEntry
    from reviews.orchestration.serving import decide as serving

    settings.LLM_BASE_URL = "http://127.0.0.1:9/v1"  # a gateway configured: budgets count
    world.a.daily_token_budget = 1_000
    world.a.save()
    LedgerEntry.objects.create(
        workspace=world.a, agent="dedup", model_requested="m", outcome="ok", input_tokens=1_000
    )
    decide = lambda ws: serving.decide_serve("k", "f", None, workspace_id=ws.pk)  # noqa: E731
    refused = decide(world.a)
    assert refused.mode == ReviewRun.Mode.FAILBACK
    assert refused.reason.startswith("the workspace's daily token budget is exhausted: 1,000")
    assert decide(world.b).mode == ReviewRun.Mode.FRESH  # no own limit; B spent nothing


def test_only_a_superuser_sets_a_workspaces_budget(world):
    bob = world.client("bob")
    page = bob.get(f"/admin/workspaces/workspace/{world.b.pk}/change/").content.decode()
    assert 'name="daily_token_budget"' not in page
    root = world.client("root")
    page = root.get(f"/admin/workspaces/workspace/{world.b.pk}/change/").content.decode()
    assert 'name="daily_token_budget"' in page


def test_the_tokens_page_offers_a_choice_of_workspace_when_there_are_several(world, client):
    from reviews.apiauth.models import ApiToken

    client.force_login(world.alice)
    page = client.get("/settings/tokens/").content.decode()
    assert 'type="hidden" name="workspace"' in page  # one workspace: no choice
    Membership.objects.create(workspace=world.b, user=world.alice, role=Role.REVIEWER)
    page = client.get("/settings/tokens/").content.decode()
    assert '<select name="workspace"' in page and "beta team" in page
    form = {"name": "for b", "scopes": ["read"], "workspace": world.b.pk}
    assert client.post("/settings/tokens/", form).status_code == 200
    assert ApiToken.objects.get(name="for b").workspace == world.b
    stranger = Workspace.objects.create(name="gamma")
    client.post("/settings/tokens/", {**form, "name": "stray", "workspace": stranger.pk})
    assert not ApiToken.objects.filter(name="stray").exists()
