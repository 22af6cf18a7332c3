"""attribution specialist (placeholder until its detector lands)."""

from __future__ import annotations

from reviews.batch import Batch
from reviews.findings import Category, RawFinding
from reviews.specialists.common import invalid_value_findings

CATEGORY = Category.ATTRIBUTION.value
SLICE: dict[str, tuple[str, ...]] = {}


def detect(batch: Batch, rules: dict) -> list[RawFinding]:
    return invalid_value_findings(batch, CATEGORY)
