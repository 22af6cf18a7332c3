"""Models that exist today: rates for a live default roster, each model's own cached-input
rate, the attempted model and the gateway's cost on every ledger row, and the models the
gateway says are gone.

Rates, USD per 1M tokens (input / cached input / output), looked up on 2026-11-22 in
stored copies of these pages (the date each copy was read is given where it says):
- Google's Gemini API pricing page, https://ai.google.dev/gemini-api/docs/pricing
  (paid tier, text, prompts up to 200k tokens; its "context caching price" is the
  cached rate); for 3.5 Flash the transcription of that page read on 2026-10-07
  (github.com/api-evangelist/deepmind, plans/deepmind-plans-pricing.yml);
- OpenRouter's model pages, https://openrouter.ai/google/<model>: the same input and
  output prices (OpenRouter passes Google's through); 3 Flash Preview $0.50 / $3,
  3.1 Flash-Lite $0.25 / $1.50, 2.5 Flash $0.30 / $2.50.
Release and shutdown dates: Google's deprecations page,
https://ai.google.dev/gemini-api/docs/deprecations (copy listing models up to
gemini-3.8-flash, released 2026-09-02):
- google/gemini-3.1-flash-lite   0.25 / 0.025 / 1.50  GA 2026-05-07, earliest shutdown
  2027-05-07. The specialists' and the trivial-tier coordinator's model.
- google/gemini-2.5-flash-lite   0.10 / 0.01  / 0.40  the cheaper failback of 3.1
  Flash-Lite. Doubtful: Google's page quoted on 2026-11-10 (aideprecations.com) says it
  "is not deprecated and remains available through the API until further notice", an
  earlier copy gave 2026-07-22. Were it gone, the gateway's 404 marks it unavailable and
  its breaker stays open a day (BREAKER_RETIRED_COOLDOWN_SECONDS).
- google/gemini-3.5-flash        1.50 / 0.15  / 9.00  GA 2026-05-19, no shutdown date.
  The coordinator's model (the cached rate as resellers list it, a tenth of input).
- google/gemini-3-flash-preview  0.50 / 0.05  / 3.00  preview since 2025-12-17, no
  shutdown date (replacement named: gemini-3.5-flash); the cheaper failback of 3.5 Flash.
- google/gemini-2.5-flash        0.30 / 0.03  / 2.50  the seed's coordinator: deprecated,
  shutdown 2026-12-01 (Google's page as quoted on 2026-11-10). Kept so old rows stay
  priced.
- google/gemini-2.0-flash, -2.0-flash-lite (and their -001 ids, which OpenRouter needed)
  were shut down on 2026-06-01; their rows from ledger/0003 stay as they are.

The seed (ledger/0003) priced cached input at 25% of input; Gemini's cache reads cost
about 10%. A seeded cached rate still at its seed value is corrected; one an operator
edited is left alone.

ledger/0003 also wrote one per-agent row (AgentModelOverride) naming the seed's roster,
which hid LLM_ROSTER for every agent. The rows still naming the seed's model are deleted:
those agents follow the code's default roster (reviews.llm.roster), or LLM_ROSTER where
it is set, and an admin row, where an operator adds or kept one, overrides both.

The values are frozen here on purpose: a migration must give the same rows whatever
the code's defaults are later.
"""

from decimal import Decimal

from django.db import migrations, models

NEW_RATES = {
    "google/gemini-3.1-flash-lite": ("0.25", "0.025", "1.50"),
    "google/gemini-2.5-flash-lite": ("0.10", "0.01", "0.40"),
    "google/gemini-3.5-flash": ("1.50", "0.15", "9.00"),
    "google/gemini-3-flash-preview": ("0.50", "0.05", "3.00"),
    "google/gemini-2.5-flash": ("0.30", "0.03", "2.50"),
}
# model -> (cached rate the seed gave it, the real one)
CACHED_FIXES = {
    "google/gemini-2.5-flash-lite": ("0.025", "0.01"),
    "google/gemini-2.5-flash": ("0.075", "0.03"),
}
# agent -> the seed's model (ledger/0003)
SEED_ROSTER = {
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
    LedgerEntry = apps.get_model("ledger", "LedgerEntry")
    for model, (seeded, real) in CACHED_FIXES.items():
        ModelRate.objects.filter(model=model, cached_input_usd_per_m=Decimal(seeded)).update(
            cached_input_usd_per_m=Decimal(real)
        )
    for model, (usd_in, usd_cached, usd_out) in NEW_RATES.items():
        ModelRate.objects.get_or_create(
            model=model,
            defaults={
                "input_usd_per_m": Decimal(usd_in),
                "cached_input_usd_per_m": Decimal(usd_cached),
                "output_usd_per_m": Decimal(usd_out),
            },
        )
    for agent, seeded in SEED_ROSTER.items():
        AgentModelOverride.objects.filter(agent=agent, model=seeded).delete()
    # Rows written before this column: a served row was attempted at the model that
    # served it; a failed one at the agent's model (the best the old rows can say).
    LedgerEntry.objects.filter(model_attempted="", model__isnull=False).update(
        model_attempted=models.F("model")
    )
    LedgerEntry.objects.filter(model_attempted="").update(
        model_attempted=models.F("model_requested")
    )


class Migration(migrations.Migration):

    dependencies = [
        ("ledger", "0003_model_rates_and_overrides"),
    ]

    operations = [
        migrations.CreateModel(
            name="UnavailableModel",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("model", models.CharField(max_length=200, unique=True)),
                ("message", models.TextField()),
                ("first_seen_at", models.DateTimeField()),
                ("last_seen_at", models.DateTimeField()),
            ],
            options={
                "ordering": ["model"],
            },
        ),
        migrations.AddField(
            model_name="ledgerentry",
            name="gateway_cost_micros",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="ledgerentry",
            name="model_attempted",
            field=models.CharField(blank=True, default="", max_length=200),
        ),
        migrations.RunPython(seed, migrations.RunPython.noop),
    ]
