"""Property completeness on the dataset page: how full each property of each object is in
the latest sync, and how that changed since the sync before (the fill rates each batch
keeps, reviews.engine.tables.profile.fill_rates). A property that lost a tenth of its
values or more is a drop, listed first: "Phone Number" falling from 80% to 40% is an
import or an integration gone wrong."""

from __future__ import annotations

from dataclasses import dataclass

from reviews.engine.vocabulary import crm_of, in_words
from reviews.web.datasets import Sync

DROP_POINTS = 10  # a fall of this many percentage points or more is flagged
OBJECT_LABELS = {
    "companies": "Companies",
    "contacts": "Contacts",
    "deals": "Deals",
    "leads": "Leads",
}


@dataclass(frozen=True, slots=True)
class PropertyFill:
    label: str
    filled: int
    total: int
    percent: int  # of records with a value, rounded down
    change: int | None  # percentage points since the sync before; None: not in it

    @property
    def dropped(self) -> bool:
        return self.change is not None and self.change <= -DROP_POINTS


@dataclass(frozen=True, slots=True)
class ObjectFill:
    name: str
    label: str
    properties: list[PropertyFill]
    # Properties with no value in this sync nor the one before (a field the export does
    # not carry, a column nobody fills): named in one line, not a row each.
    never_filled: list[str]
    records: int

    @property
    def count(self) -> int:
        return len(self.properties) + len(self.never_filled)

    @property
    def drops(self) -> int:
        return sum(p.dropped for p in self.properties)


def fill_rates(history: list[Sync]) -> list[ObjectFill]:
    """Per object of the latest sync with fill rates, its properties, the biggest drops
    first, then the emptiest."""
    kept = [sync.batch for sync in history if sync.batch.fill_rates]
    if not kept:
        return []
    latest, before = kept[0].fill_rates, (kept[1].fill_rates if len(kept) > 1 else {})
    found = []
    for name, rows in latest.items():
        earlier = {row["name"]: _percent(row) for row in before.get(name, [])}
        properties = [
            PropertyFill(
                row.get("label", row["name"]),
                row["filled"],
                row["total"],
                _percent(row),
                _percent(row) - earlier[row["name"]] if row["name"] in earlier else None,
            )
            for row in rows
            if row["total"]
        ]
        empty = [p.label for p in properties if not p.filled and not p.change]
        properties = [p for p in properties if p.filled or p.change]
        properties.sort(key=lambda p: (min(p.change or 0, 0), p.percent, p.label))
        if properties or empty:
            label = in_words(OBJECT_LABELS.get(name, name.title()), crm_of(kept[0].source))
            found.append(ObjectFill(name, label, properties, empty, rows[0]["total"]))
    return found


def _percent(row: dict) -> int:
    """Rounded to the nearest (2 of 3: 67), but never 100 short of full nor 0 above empty."""
    filled, total = row["filled"], row["total"]
    if not total:
        return 0
    percent = (filled * 200 + total) // (total * 2)
    return min(max(percent, 1 if filled else 0), 99 if filled < total else 100)
