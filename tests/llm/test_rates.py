import importlib
from decimal import ROUND_HALF_UP, Decimal

import pytest
from django.apps import apps as django_apps
from django.contrib import admin
from django.core.exceptions import ValidationError

from ledger.models import AgentModelOverride, LedgerEntry, ModelRate
from ledger.rates import price_micros
from reviews.llm.chain import failback_models
from reviews.llm.roster import (
    CHEAP,
    CHEAP_FAILBACK,
    DEFAULT_ROSTER,
    MID,
    MID_FAILBACK,
    model_for,
)

pytestmark = pytest.mark.django_db

LITE = "google/gemini-3.1-flash-lite"
FLASH = "google/gemini-3.5-flash"
# USD per 1M tokens (input, cached input, output), from Google's pricing page as cited in
# ledger/migrations/0004: written out here, not read from the code.
SEEDED = {
    LITE: ("0.25", "0.025", "1.50"),
    FLASH: ("1.50", "0.15", "9.00"),
    "google/gemini-2.5-flash-lite": ("0.10", "0.01", "0.40"),
    "google/gemini-3-flash-preview": ("0.50", "0.05", "3.00"),
    # the seed's models, kept so old rows stay priced; cached rates corrected
    "google/gemini-2.5-flash": ("0.30", "0.03", "2.50"),
    "google/gemini-2.0-flash-lite": ("0.075", "0.01875", "0.30"),
    "google/gemini-2.0-flash": ("0.10", "0.025", "0.40"),
}


def test_rates_are_seeded_for_the_live_roster_and_the_old_models():
    rates = {
        r.model: (r.input_usd_per_m, r.cached_input_usd_per_m, r.output_usd_per_m)
        for r in ModelRate.objects.all()
    }
    assert rates == {m: tuple(Decimal(v) for v in values) for m, values in SEEDED.items()}


def test_gemini_cache_reads_cost_a_tenth_of_input_not_a_quarter():
    for model in (LITE, FLASH, "google/gemini-2.5-flash-lite", "google/gemini-2.5-flash"):
        rate = ModelRate.objects.get(model=model)
        assert rate.cached_input_usd_per_m == rate.input_usd_per_m / 10, model


def test_every_default_model_and_failback_has_a_rate():
    for model in (CHEAP, MID, CHEAP_FAILBACK, MID_FAILBACK):
        assert ModelRate.objects.filter(model=model).exists(), model
        assert failback_models(model)[1:] in ([], [CHEAP_FAILBACK], [MID_FAILBACK])
    assert failback_models(CHEAP) == [CHEAP, CHEAP_FAILBACK]
    assert failback_models(MID) == [MID, MID_FAILBACK]


def test_the_default_roster_is_live_models_in_the_design_shape():
    assert not AgentModelOverride.objects.exists()  # no seeded row hides LLM_ROSTER
    roster = {agent: model_for(agent) for agent in DEFAULT_ROSTER}
    assert roster == {
        "dedup": LITE,
        "attribution": LITE,
        "pipeline": LITE,
        "freshness": LITE,
        "coordinator": FLASH,
        "coordinator_trivial": LITE,
    }


def test_llm_roster_overrides_the_default_and_an_admin_row_overrides_both(settings):
    settings.LLM_ROSTER = {"dedup": "qwen2.5:7b", "coordinator": "qwen2.5:14b"}
    assert (model_for("dedup"), model_for("coordinator")) == ("qwen2.5:7b", "qwen2.5:14b")
    assert model_for("pipeline") == LITE
    AgentModelOverride.objects.create(agent="dedup", model="google/gemini-2.5-flash-lite")
    assert model_for("dedup") == "google/gemini-2.5-flash-lite"


def test_price_bills_uncached_input_cached_input_and_output_at_their_rates():
    # 1,234 prompt tokens of which 200 cached, 321 output, at $0.25 / $0.025 / $1.50 per 1M.
    expected = (
        Decimal(1034) * Decimal("0.25")
        + Decimal(200) * Decimal("0.025")
        + Decimal(321) * Decimal("1.50")
    ).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    assert price_micros(LITE, 1234, 200, 321) == int(expected) == 745


def test_price_rounds_half_up_to_whole_micro_dollars():
    ModelRate.objects.create(
        model="test/half",
        input_usd_per_m=Decimal("0.5"),
        cached_input_usd_per_m=Decimal("0"),
        output_usd_per_m=Decimal("0"),
    )
    assert price_micros("test/half", 1, 0, 0) == 1  # 0.5 micro-dollars rounds up
    assert price_micros("test/half", 3, 0, 0) == 2  # 1.5 too


def test_price_follows_an_edited_rate_at_once():
    ModelRate.objects.filter(model=FLASH).update(output_usd_per_m=Decimal("5"))
    assert price_micros(FLASH, 0, 0, 1000) == 5000


def test_a_model_without_a_rate_costs_nothing_and_says_so(caplog):
    assert price_micros("nobody/unknown", 1000, 0, 1000) == 0
    assert "no rate for model nobody/unknown" in caplog.text


def test_rates_and_overrides_are_editable_in_the_admin():
    assert admin.site.is_registered(ModelRate)
    assert admin.site.is_registered(AgentModelOverride)
    assert "input_usd_per_m" in admin.site._registry[ModelRate].list_editable
    assert admin.site._registry[AgentModelOverride].list_editable == ("model",)


def test_an_override_must_name_a_model_with_a_rate():
    override = AgentModelOverride(agent="dedup", model="nobody/unpriced")
    with pytest.raises(ValidationError):
        override.full_clean()


# --- ledger/0004 on a database an operator has already edited ----------------------

MIGRATION_0004 = importlib.import_module("ledger.migrations.0004_live_models_and_gateway_cost")


def test_0004_keeps_an_operators_edits_and_moves_only_seed_values():
    # Back to the seed's state for one agent and one rate; an operator's choice elsewhere.
    AgentModelOverride.objects.create(agent="dedup", model="google/gemini-2.5-flash-lite")
    AgentModelOverride.objects.create(agent="pipeline", model="openai/gpt-5-mini")
    ModelRate.objects.filter(model="google/gemini-2.5-flash").update(
        cached_input_usd_per_m=Decimal("0.075")  # the seed's 25%
    )
    ModelRate.objects.filter(model="google/gemini-2.5-flash-lite").update(
        cached_input_usd_per_m=Decimal("0.02")  # an operator's edit
    )
    old = LedgerEntry.objects.create(
        agent="dedup", model_requested="google/gemini-2.5-flash-lite", model=None, outcome="timeout"
    )
    served = LedgerEntry.objects.create(
        agent="dedup",
        model_requested="google/gemini-2.5-flash-lite",
        model="google/gemini-2.0-flash-lite",
        outcome="failback",
    )

    MIGRATION_0004.seed(django_apps, None)

    # The seed's row is gone (the default applies); the operator's stays.
    assert dict(AgentModelOverride.objects.values_list("agent", "model")) == {
        "pipeline": "openai/gpt-5-mini"
    }
    cached = dict(ModelRate.objects.values_list("model", "cached_input_usd_per_m"))
    assert cached["google/gemini-2.5-flash"] == Decimal("0.03")
    assert cached["google/gemini-2.5-flash-lite"] == Decimal("0.02")
    old.refresh_from_db()
    served.refresh_from_db()
    assert old.model_attempted == "google/gemini-2.5-flash-lite"
    assert served.model_attempted == "google/gemini-2.0-flash-lite"
