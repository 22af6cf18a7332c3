# The home page's health score per run (reviews.engine.health, docs/history.md).

from django.db import migrations, models

from reviews.engine.health import health_score


def score_finished_runs(apps, schema_editor):
    """Runs finished before the score was kept get it from their stored findings (a served
    run from the run it reuses), so the home page's trends start with the history there is.
    Only open critical and warning findings are read: suggestions weigh nothing."""
    ReviewRun = apps.get_model("reviews", "ReviewRun")
    Finding = apps.get_model("reviews", "Finding")
    runs = ReviewRun.objects.filter(status="done", health__isnull=True).values_list(
        "pk", "reused_run_id", "batch__companies", "batch__contacts", "batch__deals"
    )
    for pk, reused, companies, contacts, deals in runs.iterator(chunk_size=500):
        problems = (
            Finding.objects.filter(run_id=reused or pk, severity__in=("critical", "warning"))
            .only("severity", "record_ids")
            .iterator(chunk_size=5000)
        )
        score = health_score(companies + contacts + deals, problems)
        ReviewRun.objects.filter(pk=pk).update(health=score)


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0021_i38_merge_undo"),
    ]

    operations = [
        migrations.AddField(
            model_name="reviewrun",
            name="health",
            field=models.DecimalField(blank=True, decimal_places=1, max_digits=4, null=True),
        ),
        migrations.RunPython(score_finished_runs, migrations.RunPython.noop),
    ]
