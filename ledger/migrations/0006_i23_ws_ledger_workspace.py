from django.db import migrations

from workspaces.migration_ops import move_into_default


class Migration(migrations.Migration):
    dependencies = [
        ("ledger", "0005_i24_pending_lost"),
        ("workspaces", "0001_i23_ws_workspaces"),
    ]

    operations = move_into_default("ledger", {"ledgerentry": {}})
