"""The stand-in's `POST /crm/v3/objects/tasks`, as HubSpot documents it: `properties`
with the required `hs_timestamp`, and `associations` whose HubSpot-defined type must be
the one for the record's object (task to company 192, contact 204, deal 216) and whose
record must exist; 201 with the new task (its id, its properties). The portal keeps
what was made in `Portal.tasks` (id -> {"properties", "associations"}); the statuses in
`Portal.task_failures` answer the next creations instead, making nothing."""

from __future__ import annotations

TYPES = {192: "companies", 204: "contacts", 216: "deals"}


def create_task(portal, body: dict) -> tuple[int, dict]:
    if portal.task_failures:  # a fault a test asked for: nothing is made
        code = portal.task_failures.pop(0)
        return code, {"status": "error", "message": f"answered {code}", "category": "ERROR"}
    properties = body.get("properties") or {}
    if not properties.get("hs_timestamp"):
        return 400, _invalid("Property values were not valid: hs_timestamp is required")
    associations = []
    for link in body.get("associations") or []:
        kinds = [t.get("associationTypeId") for t in link.get("types") or []]
        object_type = TYPES.get(kinds[0]) if len(kinds) == 1 else None
        record_id = str((link.get("to") or {}).get("id", ""))
        if object_type is None:
            return 400, _invalid(f"invalid association type {kinds}")
        current = portal.aliases[object_type].get(record_id, record_id)
        if current not in portal.objects[object_type]:
            return 400, _invalid(f"{object_type} {record_id} does not exist")
        associations.append((object_type, current))
    task_id = str(next(portal._new_ids))
    portal.tasks[task_id] = {"properties": dict(properties), "associations": associations}
    return 201, {"id": task_id, "properties": properties, "archived": False}


def _invalid(message: str) -> dict:
    return {"status": "error", "message": message, "category": "VALIDATION_ERROR"}
