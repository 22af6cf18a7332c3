"""Model rates and per-agent model overrides, seeded with DESIGN.md's defaults.

The seed values are frozen here on purpose: a migration must give the same rows
whatever the code's defaults are later."""

from decimal import Decimal

from django.db import migrations, models

# USD per 1M tokens: (input, cached input, output). Cached input is 25% of the input
# rate (Gemini's price for a cache hit); the 2.0 models are the failbacks of the 2.5.
RATES = {
    "google/gemini-2.5-flash-lite": ("0.10", "0.025", "0.40"),
    "google/gemini-2.5-flash": ("0.30", "0.075", "2.50"),
    "google/gemini-2.0-flash-lite": ("0.075", "0.01875", "0.30"),
    "google/gemini-2.0-flash": ("0.10", "0.025", "0.40"),
}

ROSTER = {
    "dedup": "google/gemini-2.5-flash-lite",
    "attribution": "google/gemini-2.5-flash-lite",
    "pipeline": "google/gemini-2.5-flash-lite",
    "freshness": "google/gemini-2.5-flash-lite",
    "coordinator": "google/gemini-2.5-flash",
    "coordinator_trivial": "google/gemini-2.5-flash-lite",
}


def seed(apps, schema_editor):
    ModelRate = apps.get_model("ledger", "ModelRate")
    AgentModelOverride = apps.get_model("ledger", "AgentModelOverride")
    for model, (usd_in, usd_cached, usd_out) in RATES.items():
        ModelRate.objects.get_or_create(
            model=model,
            defaults={
                "input_usd_per_m": Decimal(usd_in),
                "cached_input_usd_per_m": Decimal(usd_cached),
                "output_usd_per_m": Decimal(usd_out),
            },
        )
    for agent, model in ROSTER.items():
        AgentModelOverride.objects.get_or_create(agent=agent, defaults={"model": model})


class Migration(migrations.Migration):

    dependencies = [
        ("ledger", "0002_budgetday"),
    ]

    operations = [
        migrations.CreateModel(
            name="ModelRate",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("model", models.CharField(max_length=200, unique=True)),
                ("input_usd_per_m", models.DecimalField(decimal_places=6, max_digits=12)),
                ("cached_input_usd_per_m", models.DecimalField(decimal_places=6, max_digits=12)),
                ("output_usd_per_m", models.DecimalField(decimal_places=6, max_digits=12)),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
            options={
                "ordering": ["model"],
            },
        ),
        migrations.CreateModel(
            name="AgentModelOverride",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("agent", models.CharField(choices=[("dedup", "Dedup"), ("attribution", "Attribution"), ("pipeline", "Pipeline"), ("freshness", "Freshness"), ("coordinator", "coordinator (lite and full tiers)"), ("coordinator_trivial", "coordinator (trivial tier)")], max_length=32, unique=True)),
                ("model", models.CharField(max_length=200)),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
            options={
                "ordering": ["agent"],
            },
        ),
        migrations.RunPython(seed, migrations.RunPython.noop),
    ]
