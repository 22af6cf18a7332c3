"""The four specialists. Each module exposes:

- CATEGORY: its finding category;
- SLICE: the record fields it reads (what a model pass may be shown);
- detect(batch, rules) -> list[RawFinding]: the deterministic detector, linear in the
  batch (group by normalised keys, never compare all pairs).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

from reviews.engine.batch import Batch
from reviews.engine.findings import RawFinding

from . import attribution, dedup, freshness, pipeline

SPECIALISTS: dict[str, ModuleType] = {
    module.CATEGORY: module for module in (dedup, attribution, pipeline, freshness)
}
NAMES: tuple[str, ...] = tuple(SPECIALISTS)

Detector = Callable[[Batch, dict], list[RawFinding]]


def detector(name: str) -> Detector:
    return SPECIALISTS[name].detect
