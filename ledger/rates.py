"""Model rates as data, and the price of one call in integer micro-dollars.

A rate is USD per million tokens, so one token at a rate of R costs R micro-dollars:
the price of a call is a plain sum of tokens x rates, rounded once at the end."""

from __future__ import annotations

import logging
from decimal import ROUND_HALF_UP, Decimal

from ledger.models import ModelRate

logger = logging.getLogger(__name__)

# USD per 1M tokens: (input, cached input, output), for the default roster
# (reviews.llm.roster), its failbacks and the seed's models, so old ledger rows stay
# priced. Cached input is each model's own cache-read rate (about a tenth of input for
# Gemini). The data migrations seed ModelRate with frozen copies of these and say where
# and when each was read (ledger/0003, ledger/0004); the admin edits the table, not this.
DEFAULT_RATES: dict[str, tuple[Decimal, Decimal, Decimal]] = {
    # the default roster and its failbacks
    "google/gemini-3.1-flash-lite": (Decimal("0.25"), Decimal("0.025"), Decimal("1.50")),
    "google/gemini-2.5-flash-lite": (Decimal("0.10"), Decimal("0.01"), Decimal("0.40")),
    "google/gemini-3.5-flash": (Decimal("1.50"), Decimal("0.15"), Decimal("9.00")),
    "google/gemini-3-flash-preview": (Decimal("0.50"), Decimal("0.05"), Decimal("3.00")),
    # the seed's, kept for old rows (2.0 Flash was shut down on 2026-06-01)
    "google/gemini-2.5-flash": (Decimal("0.30"), Decimal("0.03"), Decimal("2.50")),
    "google/gemini-2.0-flash-lite": (Decimal("0.075"), Decimal("0.01875"), Decimal("0.30")),
    "google/gemini-2.0-flash": (Decimal("0.10"), Decimal("0.025"), Decimal("0.40")),
}


def rate_for(model: str) -> ModelRate | None:
    """The rate row for a model, read on every call so an admin edit applies at once."""
    return ModelRate.objects.filter(model=model).first()


def price_micros(model: str, input_tokens: int, cached_tokens: int, output_tokens: int) -> int:
    """Cost of one call in micro-dollars. `input_tokens` is the prompt as the provider
    reports it, cached tokens included: the uncached part is billed at the input rate,
    the cached part at the cached rate. A model without a rate costs 0, loudly."""
    rate = rate_for(model)
    if rate is None:
        if input_tokens or output_tokens:
            logger.warning("no rate for model %s: its call is priced at 0", model)
        return 0
    cached = max(0, min(cached_tokens, input_tokens))
    micros = (
        Decimal(input_tokens - cached) * rate.input_usd_per_m
        + Decimal(cached) * rate.cached_input_usd_per_m
        + Decimal(output_tokens) * rate.output_usd_per_m
    )
    return int(micros.quantize(Decimal(1), rounding=ROUND_HALF_UP))
