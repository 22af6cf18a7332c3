"""An owner's to-do item as a HubSpot task (connectors/owner_tasks.py). No Django.

`POST /crm/v3/objects/tasks` with the task's properties (`hs_timestamp`: its due date,
`hs_task_subject`, `hs_task_body`, `hs_task_status` NOT_STARTED, `hs_task_priority`,
`hubspot_owner_id` when the owner is a HubSpot owner id) and one association, to the
record to fix, with HubSpot's association type from tasks to that object."""

from __future__ import annotations

from connectors.hubspot.client import HubSpotClient, HubSpotError

# HubSpot-defined association type ids from a task to a company, a contact, a deal.
TASK_TO = {"companies": 192, "contacts": 204, "deals": 216}
PRIORITY = {"critical": "HIGH", "warning": "MEDIUM", "suggestion": "LOW"}


def body_of(task: dict) -> dict:
    """The create request of `task` ({object_type, record_id, owner_id, subject, body,
    due_ms, severity})."""
    properties = {
        "hs_timestamp": str(task["due_ms"]),
        "hs_task_subject": task["subject"],
        "hs_task_body": task["body"],
        "hs_task_status": "NOT_STARTED",
        "hs_task_priority": PRIORITY.get(task.get("severity", ""), "MEDIUM"),
    }
    if task.get("owner_id"):
        properties["hubspot_owner_id"] = task["owner_id"]
    association = {
        "to": {"id": task["record_id"]},
        "types": [
            {"associationCategory": "HUBSPOT_DEFINED",
             "associationTypeId": TASK_TO[task["object_type"]]}
        ],
    }  # fmt: skip
    return {"properties": properties, "associations": [association]}


def create(client: HubSpotClient, task: dict) -> tuple[str, dict]:
    """(the task's id, HubSpot's answer). Sent once: a timeout may have created it."""
    answer = client.request(
        "POST", "/crm/v3/objects/tasks", json=body_of(task), retry_failures=False, floor=False
    )
    task_id = str(answer.get("id") or "")
    if not task_id:
        raise HubSpotError(None, "HubSpot created the task but named no id")
    return task_id, answer
