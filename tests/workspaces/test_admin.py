"""Admin for staff who are not superusers: changelists, change views, list filters and
foreign-key choices hold only their workspaces' rows. Every registered model admin is
either workspace-scoped or named here as installation-wide."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.urls import reverse

from alerts.models import WebhookDelivery
from tests.workspaces.conftest import A_DATASET, B_DATASET, World
from workspaces.admin import WorkspaceScoped
from workspaces.models import Workspace

pytestmark = [pytest.mark.django_db, pytest.mark.own_workspaces]

# Not workspace data: the installation's own settings and records.
INSTALLATION_WIDE = {
    "auth.user",
    "auth.group",
    "ledger.modelrate",
    "ledger.agentmodeloverride",
    "ledger.unavailablemodel",
    "axes.accessattempt",
    "axes.accessfailurelog",
    "axes.accesslog",
}


def a_row(model_admin, w: World):
    if model_admin.model is Workspace:
        return w.a
    path = model_admin.workspace_path
    return model_admin.model._default_manager.filter(**{path: w.a}).order_by("pk").first()


def scoped_admins():
    return [
        (model, model_admin)
        for model, model_admin in admin.site._registry.items()
        if model._meta.label_lower not in INSTALLATION_WIDE
    ]


def test_every_admin_of_workspace_data_is_scoped():
    for model, model_admin in scoped_admins():
        assert isinstance(model_admin, WorkspaceScoped) or model is Workspace, model


def _urls(model, pk=None) -> tuple[str, str]:
    info = (model._meta.app_label, model._meta.model_name)
    change = reverse("admin:{}_{}_change".format(*info), args=[pk]) if pk else ""
    return reverse("admin:{}_{}_changelist".format(*info)), change


def test_staff_see_only_their_workspaces_rows_in_changelists_and_change_views(world):
    WebhookDelivery.objects.create(subscription=world.hook_a, run=world.run_a, body="{}")
    alice, bob = world.client("alice"), world.client("bob")
    checked = 0
    for model, model_admin in scoped_admins():
        row = a_row(model_admin, world)
        if row is None:
            continue  # no row of A's in this model (idempotency keys)
        changelist, change = _urls(model, row.pk)
        # A member of A finds the row, in the list and by its page.
        assert change in alice.get(changelist).content.decode(), model
        assert alice.get(change).status_code == 200, model
        # A member of B does not: not listed, and its page is "not found".
        listed = bob.get(changelist)
        assert listed.status_code == 200, model
        assert change not in listed.content.decode(), model
        response = bob.get(change)
        assert response.status_code == 302 and response["Location"] == reverse("admin:index")
        checked += 1
    assert checked >= 10


def test_list_filters_and_form_choices_offer_only_the_users_workspaces(world):
    bob = world.client("bob")
    batches = bob.get(reverse("admin:reviews_batch_changelist")).content.decode()
    assert B_DATASET in batches and A_DATASET not in batches
    add_hook = bob.get(reverse("admin:alerts_webhooksubscription_add")).content.decode()
    assert B_DATASET in add_hook and A_DATASET not in add_hook
    add_token = bob.get(reverse("admin:api_apitoken_add")).content.decode()
    assert "beta team" in add_token and "alpha team" not in add_token
    # A reviewer is no admin of A: no webhook or token for others can be made there.
    alice = world.client("alice")
    assert (
        A_DATASET not in alice.get(reverse("admin:alerts_webhooksubscription_add")).content.decode()
    )


def test_staff_cannot_post_a_webhook_for_another_workspaces_dataset(world):
    bob = world.client("bob")
    response = bob.post(
        reverse("admin:alerts_webhooksubscription_add"),
        {
            "dataset": world.run_a.batch.dataset_id,
            "url": "https://hooks.example/steal",
            "payload_format": "json",
            "triggers": ["request_changes"],
            "active": "on",
        },
    )
    assert response.status_code == 200  # the form again, with the error
    assert "Select a valid choice" in response.content.decode()
    assert not world.run_a.batch.dataset.webhooks.filter(url__contains="steal").exists()


def test_a_superuser_sees_every_workspace(world):
    root = world.client("root")
    page = root.get(reverse("admin:reviews_batch_changelist")).content.decode()
    assert A_DATASET in page and B_DATASET in page


def test_admin_actions_act_only_where_the_role_allows(world, django_user_model, client):
    from django.contrib.auth.models import Permission

    from reviews.models import Dismissal, ReviewRun
    from workspaces.models import Membership, Role

    viewer = django_user_model.objects.create_user("vic", password="vic-pass-123", is_staff=True)
    viewer.user_permissions.set(Permission.objects.all())
    Membership.objects.create(workspace=world.a, user=viewer, role=Role.VIEWER)
    client.force_login(viewer)
    runs = reverse("admin:reviews_reviewrun_changelist")
    action = {"action": "rerun_selected", "_selected_action": [world.run_a.pk]}
    client.post(runs, action)
    assert ReviewRun.objects.filter(batch=world.run_a.batch).count() == 1
    dismissals = reverse("admin:reviews_dismissal_changelist")
    standing = Dismissal.objects.get(dataset__workspace=world.a)
    client.post(dismissals, {"action": "undo_selected", "_selected_action": [standing.pk]})
    assert Dismissal.objects.get(pk=standing.pk).undone_at is None
    world.client("alice").post(runs, action)  # a reviewer may
    assert ReviewRun.objects.filter(batch=world.run_a.batch).count() == 2
    # Revoking another member's token is for the workspace's admins.
    tokens = reverse("admin:api_apitoken_changelist")
    client.post(tokens, {"action": "revoke", "_selected_action": [world.token_a.pk]})
    world.token_a.refresh_from_db()
    assert world.token_a.revoked_at is None
    Membership.objects.filter(user=viewer).update(role=Role.ADMIN)
    client.post(tokens, {"action": "revoke", "_selected_action": [world.token_a.pk]})
    world.token_a.refresh_from_db()
    assert world.token_a.revoked_at is not None


def test_a_workspaces_admins_manage_its_members_and_no_one_else(world):
    from workspaces.models import Membership, Role

    url = reverse("admin:workspaces_workspace_change", args=[world.b.pk])
    form = {
        "name": "beta team",
        "memberships-TOTAL_FORMS": "2",
        "memberships-INITIAL_FORMS": "1",
        "memberships-0-id": Membership.objects.get(user=world.bob).pk,
        "memberships-0-workspace": world.b.pk,
        "memberships-0-user": world.bob.pk,
        "memberships-0-role": "admin",
        "memberships-1-workspace": world.b.pk,
        "memberships-1-user": world.alice.pk,
        "memberships-1-role": "viewer",
    }
    response = world.client("bob").post(url, form)
    assert response.status_code == 302, response.content.decode()[-2000:]
    assert Membership.objects.get(workspace=world.b, user=world.alice).role == Role.VIEWER
    # A reviewer of A may look at A, not change who is in it.
    a_url = reverse("admin:workspaces_workspace_change", args=[world.a.pk])
    alice = world.client("alice")
    assert 'name="memberships-0-role"' not in alice.get(a_url).content.decode()
    alice.post(a_url, {**form, "name": "alpha team", "memberships-1-workspace": world.a.pk})
    assert not Membership.objects.filter(workspace=world.a, role=Role.VIEWER).exists()
