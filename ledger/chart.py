"""Bar geometry for the server-rendered SVG spend chart: no JavaScript, no CDN."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

SLOT = 20  # horizontal pixels per bar, gap included
GAP = 4
HEIGHT = 160


@dataclass(frozen=True, slots=True)
class Bar:
    x: int
    y: int
    width: int
    height: int
    label: str  # shown under the bar
    title: str  # the tooltip


@dataclass(frozen=True, slots=True)
class Chart:
    width: int
    height: int
    bars: list[Bar]
    max_label: str  # what the top of the chart stands for


def bar_chart(values: list[tuple[str, Decimal, str]], *, max_label: str = "") -> Chart:
    """One bar per (label, value, title), scaled so the largest value fills the height.
    Pixel positions are rounded only here, for drawing; the values stay exact."""
    top = max((value for _label, value, _title in values), default=Decimal(0))
    bars = []
    for index, (label, value, title) in enumerate(values):
        height = 0
        if top > 0:
            height = int((value / top * HEIGHT).to_integral_value(rounding=ROUND_HALF_UP))
        bars.append(
            Bar(
                x=index * SLOT + GAP // 2,
                y=HEIGHT - height,
                width=SLOT - GAP,
                height=height,
                label=label,
                title=title,
            )
        )
    return Chart(width=len(values) * SLOT, height=HEIGHT, bars=bars, max_label=max_label)
