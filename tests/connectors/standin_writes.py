"""The stand-in's answers to a merge's snapshot reads and an undo's writes, in HubSpot's
documented shapes (standin.py routes them here):

- GET  /crm/v3/properties/{type}: every property the type's records carry, and
  HubSpot's own (hs_object_id, createdate, the modified date, hs_merged_object_ids,
  `modificationMetadata.readOnlyValue` true);
- POST /crm/v3/objects/{type}/batch/read ({"properties", "inputs": [{"id"}]}): the
  records found (an alias reaches its record), 207 with `errors` for the others;
- POST /crm/v3/objects/{type} ({"properties"}): 201 with the new record, a new id; 400
  VALIDATION_ERROR (READ_ONLY_VALUE) for a property HubSpot alone writes; 409 CONFLICT
  for a contact whose email a contact already has (HubSpot's email is unique, and a
  merge keeps the merged contact's email on the survivor, in hs_additional_emails);
- POST /crm/v4/associations/{from}/{to}/batch/create ({"inputs": [{"from": {"id"},
  "to": {"id"}, "types": [{"associationCategory", "associationTypeId"}]}]}): 201 with a
  result per association made, 207 with `errors` for a record that is not there. A
  primary type makes the record the primary one (the other loses it)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable

from tests.connectors.standin_portal import EMAILS as ADDITIONAL_EMAILS
from tests.connectors.standin_portal import MERGED, MODIFIED, Portal, _iso

# HubSpot-defined association type ids, (primary, unlabelled), by direction.
TYPE_IDS = {
    ("contacts", "companies"): (1, 279),
    ("companies", "contacts"): (2, 280),
    ("deals", "companies"): (5, 341),
    ("companies", "deals"): (6, 342),
    ("deals", "contacts"): (None, 3),
    ("contacts", "deals"): (None, 4),
}
OBJECT_TYPE_IDS = {"contacts": "0-1", "companies": "0-2", "deals": "0-3"}
KEPT_ONE_WAY = {("contacts", "companies"), ("deals", "companies"), ("deals", "contacts")}


def _error(message: str, category: str, **more) -> dict:
    return {"status": "error", "message": message, "correlationId": str(uuid.uuid4()),
            "category": category, **more}  # fmt: skip


def read_only(object_type: str) -> set[str]:
    return {"hs_object_id", "createdate", MODIFIED[object_type], MERGED}


def route(
    portal: Portal, method: str, parts: list[str], body: dict, show: Callable
) -> tuple[int, dict] | None:
    """The answer, or None for a request that is not one of these."""
    if method == "GET" and parts[:3] == ["crm", "v3", "properties"] and len(parts) == 4:
        return 200, properties(portal, parts[3])
    if method != "POST":
        return None
    if parts[:3] == ["crm", "v3", "objects"] and len(parts) == 4:
        return create(portal, parts[3], body, show)
    if parts[:3] == ["crm", "v3", "objects"] and parts[4:] == ["batch", "read"]:
        return read(portal, parts[3], body, show)
    if parts[:3] == ["crm", "v4", "associations"] and parts[-2:] == ["batch", "create"]:
        return associate(portal, parts[3], parts[4], body)
    return None


def properties(portal: Portal, object_type: str) -> dict:
    fixed = read_only(object_type)
    names = {n for o in portal.objects[object_type].values() for n in o["properties"]}
    names |= fixed | ({"name", "domain"} if object_type == "companies" else set())
    return {
        "results": [
            {"name": n, "label": n, "type": "string", "fieldType": "text", "calculated": False,
             "modificationMetadata": {"archivable": n not in fixed, "readOnlyDefinition": True,
                                      "readOnlyValue": n in fixed}}
            for n in sorted(names)
        ]
    }  # fmt: skip


def read(portal: Portal, object_type: str, body: dict, show: Callable) -> tuple[int, dict]:
    wanted = body.get("properties") or []
    results, errors = [], []
    for item in body["inputs"]:
        rid = portal.current(object_type, str(item["id"]))
        record = portal.objects[object_type].get(rid)
        if record is None or record["archived"]:
            errors.append(_error(f"Could not get some {object_type} objects", "OBJECT_NOT_FOUND",
                                 context={"ids": [str(item["id"])]}))  # fmt: skip
            continue
        results.append(show(portal, object_type, rid, wanted))
    answer = {"status": "COMPLETE", "results": results,
              "startedAt": _iso(portal.clock_ms), "completedAt": _iso(portal.clock_ms)}  # fmt: skip
    if errors:
        return 207, {**answer, "numErrors": len(errors), "errors": errors}
    return 200, answer


def create(portal: Portal, object_type: str, body: dict, show: Callable) -> tuple[int, dict]:
    props = {k: v for k, v in (body.get("properties") or {}).items() if v is not None}
    fixed = sorted(read_only(object_type) & set(props))
    if fixed:
        problems = [{"isValid": False, "name": n, "error": "READ_ONLY_VALUE",
                     "message": f'"{n}" is a read only property; its value cannot be set.'}
                    for n in fixed]  # fmt: skip
        return 400, _error(f"Property values were not valid: {json.dumps(problems)}",
                           "VALIDATION_ERROR")  # fmt: skip
    email = str(props.get("email") or "").lower()
    if object_type == "contacts" and email:
        for rid, record in portal.objects["contacts"].items():
            held = record["properties"]
            emails = [held.get("email") or "", *(held.get(ADDITIONAL_EMAILS) or "").split(";")]
            if not record["archived"] and email in {e.lower() for e in emails if e}:
                return 409, _error(f"Contact already exists. Existing ID: {rid}", "CONFLICT")
    rid = portal.create(object_type, props)
    return 201, show(portal, object_type, rid, list(props))


def associate(portal: Portal, from_type: str, to_type: str, body: dict) -> tuple[int, dict]:
    primary_id, _ = TYPE_IDS[(from_type, to_type)]
    results, errors = [], []
    for item in body["inputs"]:
        from_id, to_id = str(item["from"]["id"]), str(item["to"]["id"])
        missing = [
            f"{kind} {rid}"
            for kind, rid in ((from_type, from_id), (to_type, to_id))
            if rid not in portal.objects[kind] or portal.objects[kind][rid]["archived"]
        ]
        if missing:
            errors.append(_error(f"No such {', '.join(missing)}", "OBJECT_NOT_FOUND",
                                 context={"fromObjectId": [from_id]}))  # fmt: skip
            continue
        type_ids = [t.get("associationTypeId") for t in item.get("types") or []]
        primary = primary_id is not None and primary_id in type_ids
        if (from_type, to_type) in KEPT_ONE_WAY:
            portal.link(from_type, from_id, to_type, to_id, primary=primary)
        else:
            portal.link(to_type, to_id, from_type, from_id, primary=primary)
        results.append({"fromObjectTypeId": OBJECT_TYPE_IDS[from_type],
                        "fromObjectId": int(from_id),
                        "toObjectTypeId": OBJECT_TYPE_IDS[to_type], "toObjectId": int(to_id),
                        "labels": ["Primary"] if primary else []})  # fmt: skip
    answer = {"status": "COMPLETE", "results": results,
              "startedAt": _iso(portal.clock_ms), "completedAt": _iso(portal.clock_ms)}  # fmt: skip
    if errors:
        return 207, {**answer, "numErrors": len(errors), "errors": errors}
    return 201, answer
