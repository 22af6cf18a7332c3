"""Root causes (docs/history.md): kinds that keep coming back as new, grouped by record
source, owner and pipeline; a group holding most of them is named, with the HubSpot
setting to change."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from reviews.engine.batch import Batch
from reviews.engine.history.observe import Seen

ROOT_CAUSE_MIN_SYNCS = 2  # a kind new in at least this many syncs keeps coming back
ROOT_CAUSE_MIN_SHARE = Decimal("0.5")  # a group holding more than this share is named
ROOT_CAUSE_MIN_LIFT = Decimal("1.5")  # ... if its share of the findings is at least this
# many times its share of all records with the field (a value every record has is no cause)
ROOT_CAUSE_FIELDS = ("record_source", "owner", "pipeline")

ADVICE: dict[str, str] = {
    "record_source": (
        "check that source's duplicate prevention (a form's 'pre-populate and deduplicate' / "
        "the integration's field mapping and its 'create or update' matching on email or domain)"
    ),
    "owner": "review that owner's entry habits; make the property required on the record's form",
    "pipeline": "make the property required on that pipeline's stages (Pipeline settings > "
    "stage properties)",
}


def root_causes(
    new_by_sync: Sequence[Sequence[tuple[str, Sequence[str]]]],
    records: Mapping[str, Mapping[str, str]],
    *,
    fields: Sequence[str] = ROOT_CAUSE_FIELDS,
) -> list[dict[str, Any]]:
    """`new_by_sync`: per sync, its new findings as (kind, record ids); `records`: record
    id -> {field: value}, every record of the syncs. For each kind new in at least
    ROOT_CAUSE_MIN_SYNCS syncs, the field value holding more than ROOT_CAUSE_MIN_SHARE of
    its findings and ROOT_CAUSE_MIN_LIFT times its share of the records, largest first."""
    population: dict[str, Counter[str]] = {name: Counter() for name in fields}
    for values in records.values():
        for name in fields:
            if values.get(name):
                population[name][values[name]] += 1
    syncs_of: Counter[str] = Counter()
    by_kind: dict[str, list[Sequence[str]]] = {}
    for sync in new_by_sync:
        for kind in {kind for kind, _ in sync}:
            syncs_of[kind] += 1
        for kind, ids in sync:
            by_kind.setdefault(kind, []).append(ids)
    causes = []
    for kind, found in by_kind.items():
        if syncs_of[kind] < ROOT_CAUSE_MIN_SYNCS:
            continue
        for name in fields:
            counts: Counter[str] = Counter()
            for ids in found:
                values = {records.get(i, {}).get(name) for i in ids} - {None, ""}
                for value in values:
                    counts[value] += 1
            if not counts:
                continue
            value, count = counts.most_common(1)[0]
            share = Decimal(count) / len(found)
            base = Decimal(population[name][value]) / max(sum(population[name].values()), 1)
            if share > ROOT_CAUSE_MIN_SHARE and share >= ROOT_CAUSE_MIN_LIFT * base:
                causes.append(
                    {
                        "kind": kind,
                        "field": name,
                        "value": value,
                        "count": count,
                        "total": len(found),
                        "syncs": syncs_of[kind],
                        "share": float(round(share, 3)),
                        "advice": ADVICE[name],
                        "text": f"{count} of {len(found)} {kind} findings in the last "
                        f"{len(new_by_sync)} syncs came from {name.replace('_', ' ')} {value}",
                    }
                )
    causes.sort(key=lambda c: (-c["count"], -c["share"], c["kind"], c["field"]))
    return causes


def record_fields(batch: Batch) -> dict[str, dict[str, str]]:
    """record id -> {record_source, owner, pipeline} as the batch holds them: the
    records' fields (owner, record_source, record_source_detail) where the reader keeps
    them, else their extra columns."""
    found: dict[str, dict[str, str]] = {}
    for name in ("companies", "contacts", "deals"):
        for record in getattr(batch, name):
            extra = batch.extra_of(record)
            source = (
                getattr(record, "record_source", None)
                or extra.get("record_source")
                or extra.get("hs_object_source")
            )
            detail = getattr(record, "record_source_detail", None) or extra.get(
                "record_source_detail"
            )
            values = {
                # "INTEGRATION / ZoomInfo": the source with its detail, as HubSpot shows it
                "record_source": f"{source} / {detail}" if source and detail else source,
                "owner": getattr(record, "owner", None)
                or extra.get("owner")
                or extra.get("hubspot_owner_id"),
                "pipeline": getattr(record, "pipeline", None) or extra.get("pipeline"),
            }
            values = {k: str(v) for k, v in values.items() if v}
            if values:
                found[record.id] = values
    return found


def new_by_sync(
    observed: Sequence[Sequence[Seen]],
) -> list[list[tuple[str, tuple[str, ...]]]]:
    """Per sync, the findings not in the sync before it, as (kind, record ids)."""
    found, before = [], set()
    for sync in observed:
        found.append([(s.kind, s.record_ids) for s in sync if s.fingerprint not in before])
        before = {s.fingerprint for s in sync}
    return found
