"""manage.py workspace create/add/list, api_token --workspace, and the demo user landing
in the workspace that holds the samples."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from reviews.apiauth.models import ApiToken
from reviews.models import Batch
from workspaces.access import role_in
from workspaces.models import Membership, Role, Workspace

pytestmark = [pytest.mark.django_db, pytest.mark.own_workspaces]


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def people(django_user_model):
    return [
        django_user_model.objects.create_user(name, password=f"{name}-pass-123")
        for name in ("olga", "pete")
    ]


def test_create_a_workspace_with_its_owner_and_add_members(people):
    olga, pete = people
    assert "olga is its admin" in run("workspace", "create", "Agency", "--owner", "olga")
    workspace = Workspace.objects.get(name="Agency")
    assert role_in(olga, workspace.pk) == Role.ADMIN
    run("workspace", "add", "Agency", "pete", "--role", "reviewer")
    assert role_in(pete, workspace.pk) == Role.REVIEWER
    run("workspace", "add", "Agency", "pete", "--role", "viewer")  # a role changed
    assert Membership.objects.get(user=pete).role == Role.VIEWER
    assert "olga (admin)" in run("workspace", "list")


def test_workspace_commands_refuse_what_does_not_exist(people):
    with pytest.raises(CommandError, match="no user 'nobody'"):
        run("workspace", "create", "X", "--owner", "nobody")
    with pytest.raises(CommandError, match="no workspace 'Y'"):
        run("workspace", "add", "Y", "olga")
    run("workspace", "create", "X", "--owner", "olga")
    with pytest.raises(CommandError, match="exists already"):
        run("workspace", "create", "X", "--owner", "pete")
    with pytest.raises(CommandError, match="invalid choice: 'owner'"):
        run("workspace", "add", "X", "pete", "--role", "owner")


def test_api_token_acts_for_the_named_workspace(people):
    run("workspace", "create", "One", "--owner", "olga")
    secret = run("api_token", "olga", "--name", "n1").strip()  # one workspace: may omit it
    assert ApiToken.objects.get(name="n1").workspace.name == "One"
    assert secret.startswith("rr_")
    run("workspace", "create", "Two", "--owner", "pete")
    run("workspace", "add", "Two", "olga", "--role", "viewer")
    with pytest.raises(CommandError, match="name the workspace"):
        run("api_token", "olga", "--name", "n2")
    with pytest.raises(CommandError, match="needs the reviewer role"):
        run("api_token", "olga", "--name", "n2", "--workspace", "Two")
    run("api_token", "olga", "--name", "n2", "--workspace", "Two", "--scope", "read")
    assert ApiToken.objects.get(name="n2").workspace.name == "Two"
    with pytest.raises(CommandError, match="no workspace 'Three'"):
        run("api_token", "olga", "--name", "n3", "--workspace", "Three")


def test_the_demo_user_lands_in_the_workspace_with_the_samples():
    run("load_samples")
    run("demo")
    samples = set(Batch.objects.values_list("workspace__name", flat=True))
    assert samples == {"default"}
    demo = Membership.objects.get(user__username="demo")
    assert (demo.workspace.name, demo.role) == ("default", Role.ADMIN)


def test_review_and_dismiss_take_a_workspace(people, tmp_path):
    from tests.uploads import DATA

    run("workspace", "create", "Agency", "--owner", "olga")
    args = [str(DATA / "seed-example.json"), "--dataset", "crm", "--format", "json"]
    with pytest.raises(SystemExit):  # its exit code is the verdict's
        call_command("review", *args, "--workspace", "Agency", stdout=StringIO())
    batch = Batch.objects.get()
    assert (batch.workspace.name, batch.dataset.workspace.name) == ("Agency", "Agency")
    fingerprint = batch.runs.get().findings.first().fingerprint
    with pytest.raises(CommandError, match="no dataset named 'crm' in workspace default"):
        run("dismiss", fingerprint, "--dataset", "crm", "--reason", "fine")
    out = run(
        "dismiss", fingerprint, "--dataset", "crm", "--reason", "fine", "--workspace", "Agency"
    )
    assert out.startswith("dismissed:")
    with pytest.raises(CommandError, match="no workspace 'Nope'"):
        call_command("review", *args, "--workspace", "Nope", stdout=StringIO())
