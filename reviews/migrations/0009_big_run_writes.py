"""A big run written and read faster: fewer indexes to maintain on the findings table,
which a findings-heavy run fills with 180k rows at once, the run page's tally read from
an index, and stored uploads compressed with lz4 on Postgres."""

import django.db.models.deletion
from django.db import migrations, models


def drop_record_ids_index_on_sqlite(apps, schema_editor):
    """0004 adds the record_ids GIN index on Postgres only, but SQLite rebuilds a table
    from the model state when a migration alters it (0006, and the AlterField above),
    and so got it as a plain index over the JSON text: no query uses it there, and it
    cost a fifth of the time of writing a findings-heavy run."""
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute('DROP INDEX IF EXISTS "finding_record_ids_gin"')


def lz4_uploads_on_postgres(apps, schema_editor):
    """Postgres compresses a stored upload (one bytea value, 200 MB for a million
    records) with pglz by default: 5 s to store the findings-heavy benchmark's file,
    against 2 s with lz4, which also stores it smaller (59 MB against 67 MB). A server
    built without lz4 keeps pglz."""
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' "
            "AND 'lz4' = ANY(enumvals)"
        )
        if cursor.fetchone():
            schema_editor.execute(
                'ALTER TABLE "reviews_batchfile" ALTER COLUMN "data" SET COMPRESSION lz4'
            )


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
        # The run page's tally counts new and open findings too: with status in the
        # index it is read from the index alone.
        migrations.RemoveIndex(model_name="finding", name="reviews_fin_run_id_46169f_idx"),
        migrations.AddIndex(
            model_name="finding",
            index=models.Index(
                fields=["run", "kind", "severity", "category", "status"],
                name="finding_run_kind_tally",
            ),
        ),
        migrations.RunPython(drop_record_ids_index_on_sqlite, migrations.RunPython.noop),
        migrations.RunPython(lz4_uploads_on_postgres, migrations.RunPython.noop),
    ]
