"""Chart geometry for the pages' server-rendered SVG: the one way revreview draws a chart
(no JavaScript, no CDN). Columns over days (the spend page), stacked bars by name (the
dataset page's open problems by owner and record source), and lines with a point per
value (the dataset page's trend, the home page's health trends). Pixel positions are
worked out only here, for drawing; the values stay exact."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

SLOT = 20  # horizontal pixels per column, gap included
GAP = 4
HEIGHT = 160

BAR_ROW = 22  # vertical pixels per bar, gap included
BAR_LABEL = 180  # the names' column
BAR_WIDTH = 420  # the longest bar


@dataclass(frozen=True, slots=True)
class Bar:
    x: int
    y: int
    width: int
    height: int
    label: str  # shown under the column
    title: str  # the tooltip


@dataclass(frozen=True, slots=True)
class Chart:
    width: int
    height: int
    bars: list[Bar]
    max_label: str  # what the top of the chart stands for


def bar_chart(values: list[tuple[str, Decimal, str]], *, max_label: str = "") -> Chart:
    """One column per (label, value, title), scaled so the largest value fills the height."""
    top = max((value for _label, value, _title in values), default=Decimal(0))
    bars = []
    for index, (label, value, title) in enumerate(values):
        height = _scaled(value, top, HEIGHT)
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


@dataclass(frozen=True, slots=True)
class Segment:
    key: str  # what it counts (a severity), for its colour
    x: int
    width: int
    value: int


@dataclass(frozen=True, slots=True)
class StackedBar:
    y: int
    label: str
    total: int
    segments: list[Segment]
    end: int  # where the bar ends, for the total written beside it
    title: str  # the tooltip: every part's value


@dataclass(frozen=True, slots=True)
class BarChart:
    width: int
    height: int
    label_width: int
    rows: list[StackedBar]


def stacked_bars(rows: Sequence[tuple[str, dict[str, int]]], keys: Sequence[str]) -> BarChart:
    """One horizontal bar per (label, {key: value}), its parts in `keys` order, scaled so
    the largest total fills BAR_WIDTH."""
    top = max((sum(parts.get(k, 0) for k in keys) for _label, parts in rows), default=0)
    drawn = []
    for index, (label, parts) in enumerate(rows):
        x, segments = BAR_LABEL, []
        for key in keys:
            width = _scaled(Decimal(parts.get(key, 0)), Decimal(top), BAR_WIDTH)
            if width:
                segments.append(Segment(key, x, width, parts[key]))
                x += width
        total = sum(parts.get(k, 0) for k in keys)
        title = f"{label}: " + ", ".join(f"{parts.get(k, 0):,} {k}" for k in keys)
        drawn.append(StackedBar(index * BAR_ROW, label, total, segments, x, title))
    return BarChart(
        width=BAR_LABEL + BAR_WIDTH + 60, height=len(rows) * BAR_ROW, label_width=BAR_LABEL,
        rows=drawn,
    )  # fmt: skip


def line(
    values: Sequence[Decimal | int], *, width: int, height: int, pad: int, low, high
) -> list[tuple[float, float]]:
    """Where each value sits on a line chart from `low` (the bottom) to `high` (the top),
    the first on the left, evenly apart; a single value on the right, where the newest
    always is. To a hundredth of a pixel."""
    inner_w, inner_h = width - 2 * pad, height - 2 * pad
    span = float(high - low) or 1.0
    step = inner_w / max(len(values) - 1, 1)
    return [
        (
            round(pad + (i * step if len(values) > 1 else inner_w), 2),
            round(pad + inner_h * (1 - float(value - low) / span), 2),
        )
        for i, value in enumerate(values)
    ]


def _scaled(value: Decimal, top: Decimal, pixels: int) -> int:
    if top <= 0:
        return 0
    return int((value / top * pixels).to_integral_value(rounding=ROUND_HALF_UP))
