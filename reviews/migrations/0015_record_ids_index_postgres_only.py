"""The record_ids GIN index leaves the model state: it exists on Postgres only (0004
creates it there), but while the state held it, SQLite rebuilt it as a plain index over
the JSON text each time a migration remade the findings table (0006, 0009, and again
0014's new columns). Out of the state, no later migration can bring it back."""

from django.db import migrations


def drop_on_sqlite(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute('DROP INDEX IF EXISTS "finding_record_ids_gin"')


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0014_i21_pipelines_owners"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveIndex(model_name="finding", name="finding_record_ids_gin"),
            ],
            database_operations=[
                migrations.RunPython(drop_on_sqlite, migrations.RunPython.noop),
            ],
        ),
    ]
