"""A fix plan's to-do item as a Salesforce Task (POST /services/data/vXX.X/sobjects/Task).
Salesforce's field names: `Subject` (255 characters), `Description`, `ActivityDate` (the
due date, YYYY-MM-DD), `Priority` (High, Normal, Low), `Status`, `OwnerId` (a User; left
out, Salesforce assigns the task to the integration user), and the record it is on:
`WhatId` for an Account or an Opportunity, `WhoId` for a Contact or a Lead. Plain Python,
no Django."""

from __future__ import annotations

from connectors.base import CrmTask

# The fix plan's object names (the CRM API's), and Salesforce's own, to the Task field
# that links to a record of that object.
LINK = {
    "companies": "WhatId",
    "deals": "WhatId",
    "contacts": "WhoId",
    "leads": "WhoId",
    "Account": "WhatId",
    "Opportunity": "WhatId",
    "Contact": "WhoId",
    "Lead": "WhoId",
}
PRIORITY = {"HIGH": "High", "MEDIUM": "Normal", "LOW": "Low"}
SUBJECT_MAX = 255
DESCRIPTION_MAX = 32_000


def task_fields(task: CrmTask) -> dict:
    """The Task's fields. Raises ValueError for an object a Task cannot be on."""
    link = LINK.get(task.object_type)
    if link is None:
        raise ValueError(f"a Salesforce Task cannot be on a {task.object_type} record")
    fields = {
        "Subject": task.subject[:SUBJECT_MAX],
        "Description": task.body[:DESCRIPTION_MAX],
        "ActivityDate": task.due.date().isoformat(),
        "Priority": PRIORITY.get(task.priority, "Normal"),
        "Status": "Not Started",
        link: task.record_id,
    }
    if task.owner_id:
        fields["OwnerId"] = task.owner_id
    return fields
