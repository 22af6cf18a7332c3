from django.db import migrations


def drop_on_sqlite(apps, schema_editor):
    """0004 adds the record_ids GIN index on Postgres only, but SQLite rebuilds a table
    from the model state when a later migration alters it (0006), and so created it as
    a plain index over the JSON text: no query uses it there, and it cost a fifth of
    the time of writing a findings-heavy run."""
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute('DROP INDEX IF EXISTS "finding_record_ids_gin"')


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0008_findings_at_scale"),
    ]

    operations = [migrations.RunPython(drop_on_sqlite, migrations.RunPython.noop)]
