from django.db import migrations, models

from workspaces.migration_ops import move_into_default


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0010_i27_fix_plan"),
        ("workspaces", "0001_i23_ws_workspaces"),
    ]

    operations = [
        *move_into_default(
            "reviews",
            {
                "dataset": {"related_name": "datasets"},
                "batch": {"related_name": "batches"},
            },
        ),
        # Dataset names: unique per workspace, no longer across the installation.
        migrations.AlterField("dataset", "name", models.CharField(max_length=200)),
        migrations.AddConstraint(
            "dataset",
            models.UniqueConstraint(fields=["workspace", "name"], name="one_dataset_name_per_ws"),
        ),
    ]
