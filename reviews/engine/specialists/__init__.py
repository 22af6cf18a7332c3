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
    detect = SPECIALISTS[name].detect

    def detect_and_price(batch: Batch, rules: dict) -> list[RawFinding]:
        return price_findings(detect(batch, rules), batch)

    return detect_and_price


def price_findings(findings: list[RawFinding], batch: Batch) -> list[RawFinding]:
    """Give each finding the currency of every deal whose money it puts at risk, so
    money is shown in its own currency and different currencies are never summed."""
    deals = {deal.id: deal for deal in batch.deals} if findings else {}
    for finding in findings:
        finding.deal_currencies = {
            deal_id: batch.currency_of(deals[deal_id])
            for deal_id in finding.exposure
            if deal_id in deals
        }
    return findings
