"""A fix plan's to-do item as a HubSpot task (POST /crm/v3/objects/tasks): its
properties and its association with the record. HubSpot's documented names: the due
date is `hs_timestamp` (required), the title `hs_task_subject`, the notes
`hs_task_body`; the association types are HubSpot-defined (task to company 192, to
contact 204, to deal 216). Plain Python, no Django."""

from __future__ import annotations

from connectors.base import CrmTask

TASK_TO = {"companies": 192, "contacts": 204, "deals": 216}
SUBJECT_MAX = 255  # hs_task_subject is a single-line text property


def task_body(task: CrmTask) -> dict:
    properties = {
        "hs_timestamp": task.due.isoformat().replace("+00:00", "Z"),
        "hs_task_subject": task.subject[:SUBJECT_MAX],
        "hs_task_body": task.body,
        "hs_task_status": "NOT_STARTED",
        "hs_task_priority": task.priority,
        "hs_task_type": "TODO",
    }
    if task.owner_id:
        properties["hubspot_owner_id"] = task.owner_id
    association = {
        "to": {"id": task.record_id},
        "types": [
            {
                "associationCategory": "HUBSPOT_DEFINED",
                "associationTypeId": TASK_TO[task.object_type],
            }
        ],
    }
    return {"properties": properties, "associations": [association]}
