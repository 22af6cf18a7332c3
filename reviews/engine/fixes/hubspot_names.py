"""How HubSpot names what the review talks about: object types, internal property names,
record links. Plain data, read by the fix plan (reviews.engine.fixes.fixplan) and its exports.

Internal property names come from the column table (reviews.engine.ingest.columns): the
one spelling of a field that is an internal name (lower case, no spaces: `dealname`,
`closedate`, `associatedcompanyid`). Associations with no property of their own are
named by the CRM API's association path (`associations.contacts`)."""

from __future__ import annotations

import re
from functools import cache

from reviews.engine.ingest.columns import COLUMNS
from reviews.engine.ingest.salesforce.fields import BY_LIST, map_headers

# HubSpot's objectTypeId per object (developers.hubspot.com, "Using object APIs").
OBJECT_TYPE_IDS: dict[str, str] = {"contacts": "0-1", "companies": "0-2", "deals": "0-3"}
APP_URL = "https://app.hubspot.com"  # app-eu1.hubspot.com for an EU portal: a setting

CONTACTS_ASSOCIATION = "associations.contacts"
COMPANIES_ASSOCIATION = "associations.companies"
# Fields with no internal name in the column table, per object.
_NO_COLUMN: dict[tuple[str, str], str] = {
    ("contacts", "companyIds"): "associatedcompanyid",
    ("deals", "companyId"): COMPANIES_ASSOCIATION,  # a deal has no company property
    ("deals", "companyIds"): COMPANIES_ASSOCIATION,
    ("deals", "contactIds"): CONTACTS_ASSOCIATION,
}
_INTERNAL = re.compile(r"^[a-z0-9_]+$")


@cache
def property_name(object_type: str, field: str) -> str:
    """The HubSpot internal name of a batch field (`closeDate` -> `closedate`), or the
    field itself when HubSpot has no standard property for it (`enrichedAt`)."""
    if (object_type, field) in _NO_COLUMN:
        return _NO_COLUMN[object_type, field]
    if object_type not in COLUMNS:  # leads: Salesforce's API name (OwnerId)
        return BY_LIST[object_type].fields.get(field, (field,))[0]
    for spelling in COLUMNS.get(object_type, {}).get(field, ()):
        if _INTERNAL.match(spelling):
            return spelling
    return field


def field_name(object_type: str, field: str, crm: str = "hubspot") -> str:
    """What the CRM calls a batch field: HubSpot's internal name (property_name), or for
    a Salesforce batch the field's API name (`closeDate` -> `CloseDate`, a deal's
    `companyId` -> `AccountId`), as an owner's task names the field to fix."""
    if crm == "salesforce" and object_type in BY_LIST:
        return BY_LIST[object_type].fields.get(field, (field,))[0]
    return property_name(object_type, field)


def salesforce_field(object_type: str, header: str) -> str:
    """The API name of the field a Salesforce file's column fills, by its header (an API
    name as it is, a report's label: Close Date -> CloseDate)."""
    sf_object = BY_LIST.get(object_type)
    key = map_headers(sf_object, [header], False).get(0) if sf_object else None
    return sf_object.fields[key][0] if sf_object and key else header


# The dataclass attribute each batch field fills, for the properties a merge compares.
MERGE_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "companies": (("name", "name"), ("domain", "domain")),
    "contacts": (("email", "email"), ("first_name", "firstName"), ("last_name", "lastName")),
    "leads": (
        ("email", "email"),
        ("first_name", "firstName"),
        ("last_name", "lastName"),
        ("company", "company"),
    ),
    "deals": (
        ("name", "name"),
        ("amount", "amount"),
        ("stage", "stage"),
        ("close_date", "closeDate"),
        ("pipeline", "pipeline"),
        ("currency", "currency"),
    ),
}
