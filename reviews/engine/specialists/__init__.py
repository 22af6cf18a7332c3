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
from reviews.engine.gcpause import no_cyclic_gc

from . import attribution, dedup, freshness, pipeline

SPECIALISTS: dict[str, ModuleType] = {
    module.CATEGORY: module for module in (dedup, attribution, pipeline, freshness)
}
NAMES: tuple[str, ...] = tuple(SPECIALISTS)

Detector = Callable[[Batch, dict], list[RawFinding]]


def detector(name: str) -> Detector:
    detect = SPECIALISTS[name].detect

    def detect_and_price(batch: Batch, rules: dict) -> list[RawFinding]:
        # The detectors build indexes over every record and, on a stale export, 150k
        # findings, and make no reference cycles: with the cyclic collector on, its
        # passes over those took 13% of a findings-heavy review.
        with no_cyclic_gc():
            return price_findings(detect(batch, rules), batch)

    return detect_and_price


def price_findings(findings: list[RawFinding], batch: Batch) -> list[RawFinding]:
    """Give each finding the currency of every deal whose money it puts at risk, so
    money is shown in its own currency and different currencies are never summed; and
    the owners and record sources of the records it names (route_findings)."""
    if not findings:
        return findings
    route_findings(findings, batch)
    deals = batch.derive("deals_by_id", lambda b: {deal.id: deal for deal in b.deals})
    for finding in findings:
        if not finding.exposure:
            continue
        finding.deal_currencies = {
            deal_id: batch.currency_of(deals[deal_id])
            for deal_id in finding.exposure
            if deal_id in deals
        }
    return findings


def route_findings(findings: list[RawFinding], batch: Batch) -> None:
    """Each finding's owners and record sources, from the records it names (by id,
    in every list: ids of different kinds may coincide). Nothing to do, and no index
    built, for a batch whose records carry neither."""
    routing = batch.derive("routing_by_id", _routing_index)
    if not routing:
        return
    for finding in findings:
        owners: dict[str, None] = {}
        sources: dict[str, None] = {}
        for record_id in finding.record_ids:
            for owner, source in routing.get(record_id, ()):
                if owner:
                    owners[owner] = None
                if source:
                    sources[source] = None
        finding.owners = list(owners)
        finding.record_sources = list(sources)


def _routing_index(batch: Batch) -> dict[str, list[tuple[str | None, str | None]]]:
    index: dict[str, list[tuple[str | None, str | None]]] = {}
    for records in (batch.companies, batch.contacts, batch.deals):
        for record in records:
            if record.owner or record.record_source or record.record_source_detail:
                source = " / ".join(
                    part for part in (record.record_source, record.record_source_detail) if part
                )
                index.setdefault(record.id, []).append((record.owner, source or None))
    return index
