"""A run keeps what still stands in its dataset (reviews.engine.history.standing), and
finding titles, which name their records by name and id, are searched through a
trigram index on Postgres (reviews.search): `UPPER(title) LIKE UPPER('%fabrikam%')`
answers from the index on a run with 154k findings.

The index is not in the model state: SQLite (the embedded mode) has no trigrams, and it
rebuilds a table from the model state when a later migration alters it."""

from django.db import migrations, models


def title_trigram_index(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    # pg_trgm is a trusted extension (Postgres 13+): the database's owner may create it.
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    # The expression Django's icontains writes: UPPER("title"::text). With the record
    # ids' GIN index, a search's OR of title and record ids is a BitmapOr of indexes,
    # never a walk of every finding. It costs a big run's write about 2.5-5 s per 150k
    # findings (bench/search_scale.py --write-cost), so it holds the title alone.
    schema_editor.execute(
        'CREATE INDEX IF NOT EXISTS "finding_title_trgm" ON "reviews_finding" '
        'USING gin ((UPPER("title"::text)) gin_trgm_ops)'
    )


def drop_title_trigram_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute('DROP INDEX IF EXISTS "finding_title_trgm"')


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0011_i23_ws_workspaces"),
    ]

    operations = [
        migrations.AddField(
            model_name="reviewrun",
            name="standing",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.RunPython(title_trigram_index, drop_title_trigram_index),
    ]
