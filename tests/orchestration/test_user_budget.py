"""The per-user daily token budget (DAILY_TOKEN_BUDGET_PER_USER): a user past it is
served by failback, naming their budget, while a colleague in the same workspace is
served fresh."""

from __future__ import annotations

import pytest

from ledger.models import LedgerEntry
from reviews.models import Batch, ReviewRun
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.serving import decide as serving
from tests.uploads import upload
from workspaces.models import Membership, Role, Workspace

pytestmark = [pytest.mark.django_db, pytest.mark.own_workspaces]


@pytest.fixture
def team(postgres, redis_url, settings, django_user_model):
    settings.LLM_BASE_URL = "http://127.0.0.1:9/v1"  # a gateway configured: budgets count
    settings.DAILY_TOKEN_BUDGET = 10_000_000
    settings.DAILY_TOKEN_BUDGET_PER_USER = 1_000
    workspace = Workspace.objects.create(name="alpha")
    ann, carl = (
        django_user_model.objects.create_user(name, password=f"{name}-pass-123")
        for name in ("ann", "carl")
    )
    for user in (ann, carl):
        Membership.objects.create(workspace=workspace, user=user, role=Role.REVIEWER)
    batch = Batch.objects.create(
        file_name="b.json", sha256="0" * 64, size_bytes=1, status=Batch.Status.ACCEPTED,
        workspace=workspace, created_by=ann,
    )  # fmt: skip
    run = ReviewRun.objects.create(
        batch=batch, mode="fresh", tier="lite", status="done", as_of=batch.created_at
    )
    LedgerEntry.objects.create(
        run=run, workspace=workspace, agent="dedup", model_requested="m", outcome="ok",
        input_tokens=600, output_tokens=400,
    )  # fmt: skip
    return workspace, ann, carl


def test_a_user_past_their_budget_is_served_by_failback_a_colleague_fresh(team):
    workspace, ann, carl = team

    def decide(user):
        return serving.decide_serve("k", "f", None, workspace_id=workspace.pk, user_id=user.pk)

    refused = decide(ann)
    assert refused.mode == ReviewRun.Mode.FAILBACK
    assert refused.reason.startswith("the user's daily token budget is exhausted: 1,000 of 1,000")
    assert 0 < refused.retry_after <= 24 * 3600
    assert decide(carl).mode == ReviewRun.Mode.FRESH


def test_an_upload_is_held_to_its_uploaders_budget(team, settings):
    workspace, ann, carl = team
    mine = submit([upload("seed-example.json")], dispatch=False, created_by=ann,
                  workspace=workspace, no_cache=True).run  # fmt: skip
    assert mine.mode == ReviewRun.Mode.FAILBACK
    assert mine.reason.startswith("the user's daily token budget is exhausted")
    theirs = submit([upload("seed-example.json")], dispatch=False, created_by=carl,
                    workspace=workspace, no_cache=True).run  # fmt: skip
    assert theirs.mode == ReviewRun.Mode.FRESH
    settings.DAILY_TOKEN_BUDGET_PER_USER = 0  # no per-user cap
    again = submit([upload("seed-example.json")], dispatch=False, created_by=ann,
                   workspace=workspace, no_cache=True).run  # fmt: skip
    assert again.mode == ReviewRun.Mode.FRESH
