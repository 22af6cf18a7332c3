"""Fewer indexes to maintain on the findings table, which a findings-heavy run fills
with 180k rows at once."""

import django.db.models.deletion
from django.db import migrations, models


def drop_record_ids_index_on_sqlite(apps, schema_editor):
    """0004 adds the record_ids GIN index on Postgres only, but SQLite rebuilds a table
    from the model state when a migration alters it (0006, and the AlterField above),
    and so got it as a plain index over the JSON text: no query uses it there, and it
    cost a fifth of the time of writing a findings-heavy run."""
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute('DROP INDEX IF EXISTS "finding_record_ids_gin"')


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0008_findings_at_scale"),
    ]

    operations = [
        # The (run, position) index serves every look-up by run.
        migrations.AlterField(
            model_name="finding",
            name="run",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="findings",
                to="reviews.reviewrun",
            ),
        ),
        migrations.RunPython(drop_record_ids_index_on_sqlite, migrations.RunPython.noop),
    ]
