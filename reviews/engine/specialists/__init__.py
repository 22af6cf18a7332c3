"""The specialists, and their registry. Each module exposes:

- CATEGORY: its finding category (also the agent's name);
- SLICE: the record fields it reads (what a model pass may be shown);
- SPEC: its declaration (reviews.engine.specialists.spec): the kinds it finds, each with
  its severities, heading label, exact or fuzzy, and the Rules fields it reads;
- detect(batch, rules) -> list[RawFinding]: the deterministic detector, linear in the
  batch (group by normalised keys, never compare all pairs);
- near_misses(batch, rules, limit) -> list[dict]: candidates for the model pass.

Adding a specialist: a module here listed in MODULES, a prompt reviews/prompts/<name>.md,
a test, and a migration (the agent choices of ledger.AgentModelOverride follow NAMES).
docs/architecture.md has the recipe.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

from reviews.engine.batch import Batch
from reviews.engine.findings import RawFinding
from reviews.engine.gcpause import no_cyclic_gc
from reviews.engine.rules import Rules
from reviews.engine.specialists.spec import Kind, Specialist, switched_off
from reviews.engine.vocabulary import HUBSPOT, in_words

from . import attribution, dedup, freshness, pipeline

# The canonical order: staffing ties (reviews.llm.judge) are broken in it.
MODULES: tuple[ModuleType, ...] = (dedup, attribution, pipeline, freshness)
SPECIALISTS: dict[str, ModuleType] = {module.CATEGORY: module for module in MODULES}
NAMES: tuple[str, ...] = tuple(SPECIALISTS)
REGISTRY: dict[str, Specialist] = {module.CATEGORY: module.SPEC for module in MODULES}


def _all_kinds() -> dict[str, Kind]:
    kinds: dict[str, Kind] = {}
    for spec in REGISTRY.values():
        for kind in spec.kinds:
            if kinds.setdefault(kind.name, kind) != kind:  # one name, one meaning
                raise ValueError(f"kind {kind.name!r} is declared twice, differently")
    return kinds


# Every kind a rule can find, by name (invalid_value once, though every category has it).
KINDS: dict[str, Kind] = _all_kinds()

Detector = Callable[[Batch, Rules], list[RawFinding]]


def rules_read() -> tuple[str, ...]:
    """The Rules fields some specialist reads (for a finding or a candidate), in the
    order Rules declares them: what a model is told of this workspace's thresholds."""
    read = {name for spec in REGISTRY.values() for name in spec.candidate_rules}
    read |= {name for kind in KINDS.values() for name in kind.rules}
    return tuple(name for name in Rules().as_dict() if name in read)


def kinds_of(category: str) -> tuple[str, ...]:
    return tuple(kind.name for kind in REGISTRY[category].kinds)


def detector(name: str) -> Detector:
    detect = SPECIALISTS[name].detect

    def detect_and_price(batch: Batch, rules: Rules) -> list[RawFinding]:
        # The detectors build indexes over every record and, on a stale export, 150k
        # findings, and make no reference cycles: with the cyclic collector on, its
        # passes over those took 13% of a findings-heavy review.
        with no_cyclic_gc():
            found = price_findings(without_switched_off(detect(batch, rules), batch), batch)
        return speak(found, batch.crm)

    return detect_and_price


def speak(findings: list[RawFinding], crm: str) -> list[RawFinding]:
    """The findings' text in the CRM's words (reviews.engine.vocabulary): an Account, an
    Opportunity for Salesforce. HubSpot's findings are returned as they are."""
    if crm == HUBSPOT:
        return findings
    for finding in findings:
        finding.title = in_words(finding.title, crm)
        finding.detail = in_words(finding.detail, crm)
        finding.suggested_fix = in_words(finding.suggested_fix, crm)
    return findings


def switched_off_kinds(batch: Batch) -> dict[str, tuple[str, ...]]:
    """The registry's kinds the batch's export switches off, each with the fields
    ("deals.stage") it lacks (spec.switched_off); {} for a complete export."""
    if not batch.exported_fields:
        return {}
    return batch.derive("switched_off", lambda b: switched_off(KINDS.values(), b.exported_fields))


def without_switched_off(findings: list[RawFinding], batch: Batch) -> list[RawFinding]:
    """The findings less those of kinds the export switched off: they would report the
    column the export left out ("no stage" on every deal), not a problem of the CRM."""
    off = switched_off_kinds(batch)
    return [f for f in findings if f.kind not in off] if off else findings


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
    for records in (batch.companies, batch.contacts, batch.deals, batch.leads):
        for record in records:
            if record.owner or record.record_source or record.record_source_detail:
                source = " / ".join(
                    part for part in (record.record_source, record.record_source_detail) if part
                )
                index.setdefault(record.id, []).append((record.owner, source or None))
    return index
