"""Two workspaces with their own data, and the people who reach them: the world every
workspace test walks. Users here join only the workspaces named (own_workspaces)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import Permission
from django.db import models, transaction
from django.test import Client

from alerts.models import WebhookSubscription
from ledger.models import LedgerEntry
from reviews.apiauth.models import ApiToken
from reviews.apiauth.tokens import create_token
from reviews.models import Dismissal, Finding, ReviewRun, RuleSet, findings_of
from reviews.orchestration.dataset.dismissals import dismiss
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from tests.uploads import upload
from workspaces.models import Membership, Role, Workspace

A_DATASET = "alpha-crm-7781"
B_DATASET = "beta-crm-5512"
A_RULE_SET = "alpha_rule_set_3318"  # a workspace rule set of A's
A_AGENT = "alpha-agent-spend"  # a ledger row of A's, shown on the spend page by agent


def reviewed_in(workspace: Workspace, dataset: str | None) -> ReviewRun:
    submission = submit(
        [upload("seed-example.json")],
        dispatch=False,
        no_cache=True,
        workspace=workspace,
        dataset=dataset,
    )
    start_review.apply(kwargs={"run_id": submission.run.pk})
    submission.run.refresh_from_db()
    return submission.run


@dataclass
class World:
    a: Workspace
    b: Workspace
    alice: object  # reviewer in A, staff
    bob: object  # admin in B, staff
    root: object  # superuser, member of nothing
    run_a: ReviewRun
    run_b: ReviewRun
    finding_a: Finding  # one of run_a's, not dismissed
    dismissed_a: Finding  # one of run_a's, dismissed
    token_a: ApiToken  # alice's, acting for A
    secrets: dict[str, str]  # actor -> API token secret (alice and root: A; bob: B)
    hook_a: WebhookSubscription
    hook_b: WebhookSubscription

    def client(self, actor: str) -> Client:
        client = Client()
        if actor != "anon":
            client.force_login(getattr(self, actor))
        return client


def _staff(django_user_model, name: str, **extra):
    user = django_user_model.objects.create_user(name, password=f"{name}-pass-123", **extra)
    user.user_permissions.set(Permission.objects.all())  # only workspaces narrow it
    return user


@pytest.fixture(scope="module")
def _world_rows(request, django_db_setup, django_db_blocker):
    """The world made once per module, in a transaction that each test's own (pytest-django's
    `db`) nests in as a savepoint and rolls back to: two reviews per test were most of the
    workspace tests' time. The module's end rolls the world back too."""
    from django.contrib.auth import get_user_model

    # Made before any test's autouse fixtures: no user joins the default workspace.
    assert request.node.get_closest_marker("own_workspaces"), "the world's modules set it"
    with django_db_blocker.unblock():
        made = transaction.atomic()
        made.__enter__()
        try:
            world = _make_world(get_user_model())
        except BaseException:
            transaction.set_rollback(True)
            made.__exit__(None, None, None)
            raise
    yield world
    with django_db_blocker.unblock():
        transaction.set_rollback(True)
        made.__exit__(None, None, None)


@pytest.fixture
def world(_world_rows: World, db) -> World:
    """The module's world, its rows read again: what a test changed on an instance (a
    workspace's budget saved, a token refreshed) stays in that test."""
    w = _world_rows
    rows = {
        name: type(row).objects.get(pk=row.pk)
        for name, row in vars(w).items()
        if isinstance(row, models.Model)
    }
    return dataclasses.replace(w, **rows, secrets=dict(w.secrets))


def _make_world(django_user_model) -> World:
    a = Workspace.objects.create(name="alpha team")
    b = Workspace.objects.create(name="beta team")
    alice = _staff(django_user_model, "alice", is_staff=True)
    bob = _staff(django_user_model, "bob", is_staff=True)
    root = django_user_model.objects.create_superuser("root", password="root-pass-123")
    Membership.objects.create(workspace=a, user=alice, role=Role.REVIEWER)
    Membership.objects.create(workspace=b, user=bob, role=Role.ADMIN)
    run_a = reviewed_in(a, A_DATASET)
    run_b = reviewed_in(b, B_DATASET)
    found = list(findings_of(run_a).order_by("position")[:2])
    assert len(found) == 2, "the seed batch has findings"
    dismiss(run_a.batch.dataset, found[1].fingerprint, reason="known", user=alice)
    LedgerEntry.objects.create(
        workspace=a, run=run_a, agent=A_AGENT, model_requested="m", outcome="ok"
    )
    token_a = create_token(alice, "alpha nightly", workspace=a)
    secrets = {
        "alice": token_a.secret,
        "bob": create_token(bob, "beta nightly", workspace=b).secret,
        "root": create_token(root, "root in alpha", workspace=a).secret,
    }
    hooks = [
        WebhookSubscription.objects.create(
            dataset=run.batch.dataset,
            url="https://hooks.example/x",
            secret="s",
            triggers=["approve", "approve_with_comments", "request_changes"],
        )
        for run in (run_a, run_b)
    ]
    assert Dismissal.objects.filter(dataset__workspace=a).count() == 1
    set_rule = {"id": "walk_set_rule", "object": "deals", "severity": "warning"}
    set_rule |= {"title": "walk", "fix": "walk", "when": "amount IS NULL"}
    RuleSet.objects.create(workspace=a, name=A_RULE_SET, number=1, rules=[set_rule], reason="w")
    return World(
        a, b, alice, bob, root, run_a, run_b, found[0], found[1], token_a.token, secrets, *hooks
    )
