"""Existing data moves into the default workspace: every user becomes a member (a
superuser an admin), every batch, dataset, token and ledger row belongs to it."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

# slow: migrations run forwards and back.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.own_workspaces, pytest.mark.slow]

BEFORE = [
    ("reviews", "0010_i27_fix_plan"),
    ("api", "0001_api_tokens"),
    ("ledger", "0005_i24_pending_lost"),
    ("workspaces", None),
]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state([t for t in targets if t[1] is not None]).apps


def test_existing_rows_and_users_move_into_the_default_workspace():
    old = migrate(BEFORE)
    User = old.get_model("auth", "User")
    ada = User.objects.create(username="ada", is_superuser=True, is_staff=True)
    bo = User.objects.create(username="bo")
    dataset = old.get_model("reviews", "Dataset").objects.create(name="crm")
    batch = old.get_model("reviews", "Batch").objects.create(
        file_name="b.json", sha256="x", size_bytes=1, dataset=dataset, created_by=bo
    )
    token = old.get_model("api", "ApiToken").objects.create(
        user=bo, name="t", prefix="rr_", digest="d" * 64, scopes=["read"]
    )
    entry = old.get_model("ledger", "LedgerEntry").objects.create(
        agent="dedup", model_requested="m", outcome="ok"
    )
    executor = MigrationExecutor(connection)
    new = migrate(executor.loader.graph.leaf_nodes())
    default = new.get_model("workspaces", "Workspace").objects.get(name="default")
    roles = dict(
        new.get_model("workspaces", "Membership")
        .objects.filter(workspace=default)
        .values_list("user_id", "role")
    )
    assert roles == {ada.pk: "admin", bo.pk: "reviewer"}
    for model, pk in [
        ("reviews.Dataset", dataset.pk),
        ("reviews.Batch", batch.pk),
        ("api.ApiToken", token.pk),
        ("ledger.LedgerEntry", entry.pk),
    ]:
        row = new.get_model(*model.split(".")).objects.get(pk=pk)
        assert row.workspace_id == default.pk, model
