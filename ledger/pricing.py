"""What a run cost, next to what an analyst would have cost. Integer micro-dollars and
Decimal only: float appears only when a number is printed."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from django.conf import settings
from django.db.models import Sum

from ledger.models import LedgerEntry

MICROS_PER_USD = Decimal(1_000_000)


def micros_to_usd(micros: int) -> Decimal:
    return Decimal(micros) / MICROS_PER_USD


def analyst_cost_usd(records: int) -> Decimal:
    """The analyst baseline: minutes per record at an hourly rate, to the cent."""
    minutes = Decimal(records) * settings.ANALYST_MINUTES_PER_RECORD
    cost = minutes / Decimal(60) * settings.ANALYST_HOURLY_USD
    return cost.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


@dataclass(frozen=True, slots=True)
class RunCost:
    tokens: int
    cost_micros: int

    @property
    def usd(self) -> Decimal:
        return micros_to_usd(self.cost_micros)


def run_cost(run_id: int) -> RunCost:
    totals = LedgerEntry.objects.filter(run_id=run_id).aggregate(
        input=Sum("input_tokens"), output=Sum("output_tokens"), micros=Sum("cost_micros")
    )
    return RunCost(
        tokens=(totals["input"] or 0) + (totals["output"] or 0),
        cost_micros=totals["micros"] or 0,
    )
