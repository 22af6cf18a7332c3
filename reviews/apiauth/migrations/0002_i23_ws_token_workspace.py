from django.db import migrations, models

from workspaces.migration_ops import move_into_default


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0001_api_tokens"),
        ("workspaces", "0001_i23_ws_workspaces"),
    ]

    operations = move_into_default(
        "api", {"apitoken": {"on_delete": models.CASCADE, "related_name": "api_tokens"}}
    )
