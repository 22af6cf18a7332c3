"""reviews 0020 (the merge's survivor): merges answered before it keep the record
HubSpot's answer named as their survivor, else the primary they were sent to; a merge
not made has none."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from reviews.models import AppliedMerge, Dataset

pytestmark = [pytest.mark.django_db(transaction=True)]

BEFORE = [("reviews", "0019_i37_missing_columns")]


def test_merges_answered_before_keep_the_survivor_their_answer_named(postgres):
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    user = old.get_model("auth", "User").objects.create(username="ops", is_staff=True)
    workspace = old.get_model("workspaces", "Workspace").objects.get_or_create(name="w38")[0]
    dataset = old.get_model("reviews", "Dataset").objects.create(name="acme", workspace=workspace)
    rows = old.get_model("reviews", "AppliedMerge").objects
    common = {"dataset": dataset, "requested_by": user}
    deal = rows.create(object_type="deals", primary_id="5001", merged_id="5002",
                       status="merged", response={"id": "5901"}, **common)  # fmt: skip
    company = rows.create(object_type="companies", primary_id="9001", merged_id="9002",
                          status="merged", response=None, **common)  # fmt: skip
    refused = rows.create(object_type="contacts", primary_id="7001", merged_id="7004",
                          status="failed", response={"status": "error"}, **common)  # fmt: skip

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    survivors = dict(AppliedMerge.objects.values_list("pk", "survivor_id"))
    assert survivors == {deal.pk: "5901", company.pk: "9001", refused.pk: ""}
    assert Dataset.objects.get(pk=dataset.pk).name == "acme"
