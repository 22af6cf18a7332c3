from decimal import ROUND_HALF_UP, Decimal

import pytest
from django.contrib import admin
from django.core.exceptions import ValidationError

from ledger.models import AgentModelOverride, ModelRate
from ledger.rates import price_micros

pytestmark = pytest.mark.django_db

LITE = "google/gemini-2.5-flash-lite"
FLASH = "google/gemini-2.5-flash"


def test_rates_are_seeded_with_the_design_defaults():
    lite = ModelRate.objects.get(model=LITE)
    flash = ModelRate.objects.get(model=FLASH)
    assert (lite.input_usd_per_m, lite.output_usd_per_m) == (Decimal("0.10"), Decimal("0.40"))
    assert (flash.input_usd_per_m, flash.output_usd_per_m) == (Decimal("0.30"), Decimal("2.50"))
    for rate in ModelRate.objects.all():
        assert rate.cached_input_usd_per_m == rate.input_usd_per_m / 4


def test_roster_is_seeded_with_the_design_defaults():
    roster = dict(AgentModelOverride.objects.values_list("agent", "model"))
    assert roster == {
        "dedup": LITE,
        "attribution": LITE,
        "pipeline": LITE,
        "freshness": LITE,
        "coordinator": FLASH,
        "coordinator_trivial": LITE,
    }


def test_price_bills_uncached_input_cached_input_and_output_at_their_rates():
    # 1,234 prompt tokens of which 200 cached, 321 output, at $0.10 / $0.025 / $0.40 per 1M.
    expected = (
        Decimal(1034) * Decimal("0.10")
        + Decimal(200) * Decimal("0.025")
        + Decimal(321) * Decimal("0.40")
    ).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    assert price_micros(LITE, 1234, 200, 321) == int(expected) == 237


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
    override = AgentModelOverride.objects.get(agent="dedup")
    override.model = "nobody/unpriced"
    with pytest.raises(ValidationError):
        override.full_clean()
