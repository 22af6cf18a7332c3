"""A batch keeps what its upload asked for (requested_as_of, requested_dataset,
rate_keys) beside the effective as-of. Existing rows: a batch not read yet held its
request in as_of and dataset (put there for the sweep); a batch read with a given as-of
has it as its effective one (as_of_source "given")."""

from django.db import migrations, models
from django.db.models import F, Q


def requested_from_effective(apps, schema_editor):
    Batch = apps.get_model("reviews", "Batch")
    Batch.objects.filter(Q(status="received") | Q(as_of_source="given")).update(
        requested_as_of=F("as_of")
    )
    unread = Batch.objects.filter(status="received", dataset__isnull=False)
    for batch_id, name in unread.values_list("pk", "dataset__name").iterator():
        Batch.objects.filter(pk=batch_id).update(requested_dataset=name)


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0015_record_ids_index_postgres_only"),
    ]

    operations = [
        migrations.AddField(
            model_name="batch",
            name="requested_as_of",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="batch",
            name="requested_dataset",
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.AddField(
            model_name="batch",
            name="rate_keys",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.RunPython(requested_from_effective, migrations.RunPython.noop),
    ]
