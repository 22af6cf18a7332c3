"""A portal's snapshot as plain data: what a pull asks for, and the CRM API JSON document
(reviews/engine/ingest/api_json.py reads it) built from what it got. No Django.

A snapshot is {object type: {id: object}}, each object as the v3 API writes it
({"id", "properties", "updatedAt", "associations"}). An incremental pull rebuilds the
whole snapshot: the last one, with the changed objects put in, the archived ones and
the ones merged away taken out."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from reviews.engine.fixes.survivor import id_key
from reviews.engine.ingest.columns import COLUMNS

TYPES = ("companies", "contacts", "deals")
SINGULAR = {"companies": "company", "contacts": "contact", "deals": "deal"}
MODIFIED = {
    "companies": "hs_lastmodifieddate",
    "contacts": "lastmodifieddate",
    "deals": "hs_lastmodifieddate",
}
MERGED = "hs_merged_object_ids"  # on the record that survived a merge: "id;id"
# Read beside the review's columns: the owner and where the record came from.
_ALSO = ("hubspot_owner_id", "hs_object_source_label", "hs_object_source_detail_1", MERGED)
# (from, to) pairs read through the v4 associations batch endpoint.
ASSOCIATIONS = (("contacts", "companies"), ("deals", "companies"), ("deals", "contacts"))
_INTERNAL_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
# The properties that name a record's company (associatedcompanyid), by type: the
# internal names of the column table's companyId, a fact kept there once.
_COMPANY_PROPERTIES = {
    kind: tuple(n for n in COLUMNS[kind].get("companyId", ()) if _INTERNAL_NAME.match(n))
    for kind in TYPES
}

Snapshot = dict[str, dict[str, dict]]


def properties(object_type: str) -> list[str]:
    """The properties a pull asks for: every internal name in the review's column table
    (a fact kept there once), the modified date, owner, record source and merges."""
    names = {
        label
        for labels in COLUMNS[object_type].values()
        for label in labels
        if _INTERNAL_NAME.match(label)
    }
    names.update(_ALSO)
    names.add(MODIFIED[object_type])
    return sorted(names)


def slim(obj: dict) -> dict:
    """An object as kept in the snapshot: its non-empty properties, without the merge
    list (the pull's business, not the review's)."""
    props = {
        k: v
        for k, v in (obj.get("properties") or {}).items()
        if v not in (None, "") and k != MERGED
    }
    kept = {"id": str(obj["id"]), "properties": props}
    if obj.get("updatedAt"):
        kept["updatedAt"] = obj["updatedAt"]
    return kept


def returned(objects: list[dict]) -> set[str]:
    """The property names the portal answered with, blank ones too (slim drops those)."""
    return {name for obj in objects for name in obj.get("properties") or ()}


def merged_ids(obj: dict) -> list[str]:
    value = (obj.get("properties") or {}).get(MERGED) or ""
    return [part.strip() for part in str(value).split(";") if part.strip()]


def set_associations(obj: dict, to_type: str, found: list, from_type: str) -> None:
    """The v4 answer as the v3 object's `associations`: the primary company first, typed
    `<from>_to_company` (what the reader takes as the record's company), the others
    `<from>_to_company_unlabeled`.

    The associations just read decide the record's company: a company property
    (`associatedcompanyid`) is set to the primary company, or dropped when there is none.
    An unchanged record keeps its properties from the last snapshot, and after its
    company is merged away that property still names the merged-away company (HubSpot
    moves the association without modifying the record): read as its company, it would
    be a false dangling reference."""
    base = f"{SINGULAR[from_type]}_to_{SINGULAR[to_type]}"
    ordered = sorted(found, key=lambda pair: (not pair[1], _id_key(pair[0])))
    if to_type == "companies":
        primary = next((to_id for to_id, is_primary in ordered if is_primary), None)
        props = obj.setdefault("properties", {})
        for name in _COMPANY_PROPERTIES.get(from_type, ()):
            if primary is not None:
                props[name] = primary
            else:
                props.pop(name, None)
    results = [
        {"id": to_id, "type": base if primary or to_type != "companies" else f"{base}_unlabeled"}
        for to_id, primary in ordered
    ]
    associations = obj.setdefault("associations", {})
    if results:
        associations[to_type] = {"results": results}
    else:
        associations.pop(to_type, None)
    if not associations:
        obj.pop("associations")


def document(snapshot: Snapshot, returned: dict[str, list[str]] | None = None) -> dict:
    """The CRM API JSON document of a snapshot, objects in id order; with `returned`
    (type -> the properties the portal returned), under "properties": the reader takes
    a list's fields from it, as the objects keep only non-blank values."""
    doc: dict = {
        kind: [snapshot.get(kind, {})[i] for i in sorted(snapshot.get(kind, {}), key=_id_key)]
        for kind in TYPES
    }
    if returned:
        doc["properties"] = {kind: returned[kind] for kind in TYPES if kind in returned}
    return doc


def returned_of(doc: dict | None) -> dict[str, list[str]]:
    """The "properties" a document carries (document's `returned`), {} if none."""
    found = (doc or {}).get("properties")
    return {k: v for k, v in found.items() if k in TYPES} if isinstance(found, dict) else {}


def from_document(doc: dict) -> Snapshot:
    return {kind: {str(o["id"]): o for o in doc.get(kind) or []} for kind in TYPES}


def epoch_ms(value: object) -> int:
    """HubSpot writes datetimes as ISO 8601 or as epoch milliseconds."""
    if value in (None, ""):
        return 0
    text = str(value)
    if text.isdigit():
        return int(text)
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def _id_key(value: str) -> tuple[int, int, str, str]:
    """Numeric ids in number order, others after them: the survivor rule's order,
    which never goes through int() (a 5,000-digit id is past its limit)."""
    return id_key(value)
