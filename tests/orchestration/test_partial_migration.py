"""reviews 0019 (missing columns): batches stored before it migrate with no missing
column, so their runs read as before (not partial unless a list was left out)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from reviews.models import Batch

# slow: migrations run forwards and back.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

BEFORE = [("reviews", "0015_record_ids_index_postgres_only")]


def test_batches_stored_before_have_no_missing_columns(postgres):
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps.get_model("reviews", "Batch")
    common = {"file_name": "deals.csv", "sha256": "0" * 64, "size_bytes": 10}
    whole = old.objects.create(**common)
    contacts_only = old.objects.create(partial=["companies", "deals"], **common)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert Batch.objects.get(pk=whole.pk).missing_columns == []
    assert Batch.objects.get(pk=whole.pk).is_partial is False
    assert Batch.objects.get(pk=contacts_only.pk).is_partial is True
