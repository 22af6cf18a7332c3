"""Where a proposed threshold goes (reviews.engine.history.tune): the roundest number
a person would set between what the team dismissed and what it kept, with a margin on
both sides, and how much an age grows between syncs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

# When the syncs do not show how fast a measured age grows (one sync), a week's.
AGEING_DAYS_UNSEEN = 7


def ageing_per_sync(series: Iterable[Sequence[int | Decimal]]) -> Decimal:
    """How much an age grows from one sync to the next, as the syncs show it: the
    largest average step of any finding measured in several syncs (a week's, unseen)."""
    steps = [
        (Decimal(values[-1]) - Decimal(values[0])) / (len(values) - 1)
        for values in series
        if len(values) > 1
    ]
    growing = [step for step in steps if step > 0]
    if not growing:
        return Decimal(AGEING_DAYS_UNSEEN)
    return max(growing).to_integral_value(rounding=ROUND_CEILING)


def midpoint(low: Decimal, high: Decimal, *, past_low: bool, whole: bool) -> Decimal | int | None:
    """The roundest number in the middle half between `low` and `high` (the nearest to
    their midpoint among the equally round), else the roundest between them at all: a
    threshold with a margin on both sides, as a person would set it (300, not 347)."""
    quarter = (high - low) / 4
    inner = roundest_near((low + high) / 2, low + quarter, high - quarter, whole=whole)
    if inner is not None:
        return inner
    return roundest(low, high, past_low=past_low, whole=whole)


def roundest_near(
    target: Decimal, low: Decimal, high: Decimal, *, whole: bool
) -> Decimal | int | None:
    """The multiple of the coarsest STEP within [low, high], the nearest to `target`."""
    for step in STEPS:
        if whole and step < 1:
            break
        first = (low / step).to_integral_value(rounding=ROUND_CEILING) * step
        if first > high:
            continue
        below = (target / step).to_integral_value(rounding=ROUND_FLOOR) * step
        options = [v for v in (below, below + step) if low <= v <= high] or [first]
        value = min(options, key=lambda v: (abs(v - target), v))
        if whole:
            return int(value)
        return value.quantize(Decimal(1)) if value == int(value) else value.normalize()
    return None


def as_text(value: Decimal) -> str:
    return str(value.quantize(Decimal(1)) if value == int(value) else value.normalize())


STEPS = tuple(Decimal(step) for step in ("1000", "500", "100", "50", "10", "5", "1", "0.5",
                                          "0.1", "0.05", "0.01"))  # fmt: skip


def roundest(
    low: Decimal, high: Decimal | None, *, past_low: bool, whole: bool
) -> Decimal | int | None:
    """The number with the fewest significant digits from `low` (excluded when
    `past_low`) up to `high` (included when `past_low`, else excluded; no bound: within a
    tenth above `low`); None when none fits at a hundredth (a whole number for `whole`)."""
    top = high if high is not None else low + max(abs(low) / 10, Decimal(1))
    for step in STEPS:
        if whole and step < 1:
            break
        value = (low / step).to_integral_value(rounding=ROUND_CEILING) * step
        if value == low and past_low:
            value += step
        if value < top or (value == top and past_low):
            if whole:
                return int(value)
            return value.quantize(Decimal(1)) if value == int(value) else value.normalize()
    return None
