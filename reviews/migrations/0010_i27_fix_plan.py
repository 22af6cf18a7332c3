import django.core.validators
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0009_big_run_writes"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="dataset",
            name="hubspot_portal_id",
            field=models.CharField(
                blank=True,
                default="",
                help_text="The HubSpot account's Hub ID: tasks in the fix plan link to its records.",
                max_length=20,
                validators=[
                    django.core.validators.RegexValidator(
                        "^[0-9]+$", "a HubSpot portal (Hub) id is a number"
                    )
                ],
                verbose_name="HubSpot portal id",
            ),
        ),
        migrations.CreateModel(
            name="AppliedMerge",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("object_type", models.CharField(max_length=16)),
                ("primary_id", models.CharField(max_length=64)),
                ("merged_id", models.CharField(max_length=64)),
                ("fingerprint", models.CharField(blank=True, max_length=16)),
                ("reason", models.TextField(blank=True)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "Pending"),
                            ("applying", "Applying"),
                            ("merged", "Merged"),
                            ("failed", "Failed"),
                            ("unknown", "Unknown"),
                        ],
                        default="pending",
                        max_length=16,
                    ),
                ),
                ("requested_at", models.DateTimeField(auto_now_add=True)),
                ("claimed_at", models.DateTimeField(blank=True, null=True)),
                ("answered_at", models.DateTimeField(blank=True, null=True)),
                ("http_status", models.PositiveSmallIntegerField(blank=True, null=True)),
                ("response", models.JSONField(blank=True, null=True)),
                ("error", models.TextField(blank=True)),
                (
                    "dataset",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="applied_merges",
                        to="reviews.dataset",
                    ),
                ),
                (
                    "requested_by",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="applied_merges",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "run",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="applied_merges",
                        to="reviews.reviewrun",
                    ),
                ),
            ],
            options={
                "ordering": ["-requested_at", "-id"],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("status", "failed"), _negated=True),
                        fields=("dataset", "object_type", "merged_id"),
                        name="merge_each_record_once",
                    )
                ],
            },
        ),
    ]
