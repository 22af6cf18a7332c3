"""The to-do list of the fix plan (reviews.engine.fixes.fixplan): a finding that is not a
duplicate becomes a task on the one record to edit, with the HubSpot property to fix,
the record's owner (else its company's owner), and a link to the record. Which record
and which field each kind's `fix` declares (reviews.engine.specialists.spec.FixTarget)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from reviews.engine.batch import Batch, Company, Contact, Deal
from reviews.engine.fixes.hubspot_names import (
    COMPANIES_ASSOCIATION,
    CONTACTS_ASSOCIATION,
    field_name,
    salesforce_field,
)
from reviews.engine.fixes.links import NO_LINKS, RecordLinks
from reviews.engine.specialists import KINDS
from reviews.engine.specialists.spec import ANY_RECORD, FixTarget, Kind

Record = Company | Contact | Deal
# the order an ambiguous id is looked up
OBJECT_TYPES = ("deals", "contacts", "companies", "leads")

# Where an export keeps a record's owner until the batch has an `owner` field of its own.
OWNER_KEYS = ("owner", "hubspot_owner_id", "Deal owner", "Contact owner", "Company owner")
_PATH = re.compile(r"\b(companies|contacts|deals)\[\d+\]\.(\w+)")
# A Salesforce file's bad value: "Opportunity.csv row 4 (AccountId): ..." (its header).
_PLACE = re.compile(r"\brow \d+ \((.+?)\): ")


@dataclass(frozen=True, slots=True)
class PlanFinding:
    """What the plan reads of a finding (a Finding row or a RawFinding)."""

    category: str
    kind: str
    severity: str
    title: str
    record_ids: Sequence[str]
    fingerprint: str = ""
    amount: Decimal | None = None
    currency: str = ""
    suggested_fix: str = ""
    detail: str = ""
    first_seen: datetime | None = None  # the dataset's first sync that had it; its age


@dataclass(slots=True)
class Task:
    object: str  # companies | contacts | deals
    record_id: str
    owner: str | None
    property: str  # HubSpot internal name; "" for the record as a whole
    problem: str
    amount: Decimal | None
    currency: str
    url: str
    kind: str
    severity: str
    fix: str
    fingerprint: str
    merged_into: str = ""  # the plan merges this record away: fix it on this survivor


def fix_target(kind: str, kinds: Mapping[str, Kind] = KINDS) -> FixTarget:
    """Where a finding of `kind` is fixed, as the kind declares it; a kind nobody declared
    (a model's own, docs/rules.md#the-registry) on the first of its records, as a whole."""
    declared = kinds.get(kind)
    return declared.fix if declared is not None else ANY_RECORD


def task_of(
    batch: Batch,
    finding: PlanFinding,
    *,
    links: RecordLinks = NO_LINKS,
    kinds: Mapping[str, Kind] = KINDS,
) -> Task | None:
    """The task for one finding, or None when none of its records is in the batch.
    `kinds`: the kinds by name (the registry's, and any declared at run time)."""
    target = fix_target(finding.kind, kinds)
    found = _record(batch, finding, target.object)
    if found is None:
        return None
    object_type, record = found
    if target.field is None:
        prop = _property(batch, finding, object_type, record)
    else:
        prop = field_name(object_type, target.field, batch.crm) if target.field else ""
    problem = finding.title
    if finding.kind == "unresolved_company_name" and len(finding.record_ids) > 1:
        problem += f" (also on {len(finding.record_ids) - 1} more records)"
    return Task(
        object=object_type,
        record_id=record.id,
        owner=owner_of(batch, record),
        property=prop,
        problem=problem,
        amount=finding.amount,
        currency=finding.currency,
        url=links.url(object_type, record.id),
        kind=finding.kind,
        severity=finding.severity,
        fix=finding.suggested_fix,
        fingerprint=finding.fingerprint,
    )


def records_by_type(batch: Batch) -> dict[str, dict[str, Record]]:
    def build(b: Batch) -> dict[str, dict[str, Any]]:
        return {
            "companies": {c.id: c for c in b.companies},
            "contacts": {c.id: c for c in b.contacts},
            "deals": {d.id: d for d in b.deals},
            "leads": {lead.id: lead for lead in b.leads},
        }

    return batch.derive("fixplan_records", build)


def owner_of(batch: Batch, record: Record) -> str | None:
    """The record's owner; for a contact or deal without one, its company's owner."""
    owner = _own_owner(batch, record)
    if owner or isinstance(record, Company) or not getattr(record, "company_id", None):
        return owner
    company = records_by_type(batch)["companies"].get(record.company_id)
    return _own_owner(batch, company) if company is not None else None


def _own_owner(batch: Batch, record: Record) -> str | None:
    owner = getattr(record, "owner", None)  # the batch's own field, once it has one
    if owner:
        return str(owner)
    extra = batch.extra_of(record)
    for key in OWNER_KEYS:
        value = extra.get(key)
        if value not in (None, ""):
            return str(value)
    return None


def _record(
    batch: Batch, finding: PlanFinding, object_type: str | None
) -> tuple[str, Record] | None:
    """The record the task is on: of the kind's object type, else the first id of the
    finding that is in the batch (a deal before a contact before a company)."""
    index = records_by_type(batch)
    if finding.kind == "invalid_value":
        match = _PATH.search(finding.detail)  # the title names the record, the detail its path
        object_type = match.group(1) if match else None
    if finding.kind == "dangling_reference":
        object_type = "deals" if finding.title.startswith("Deal ") else "contacts"
    types = (object_type,) if object_type else OBJECT_TYPES
    for record_id in finding.record_ids:
        for name in types:
            record = index[name].get(record_id)
            if record is not None:
                return name, record
    return None


def _property(batch: Batch, finding: PlanFinding, object_type: str, record: Record) -> str:
    if finding.kind == "invalid_value":
        # Several bad values of one record are one finding (the coordinator unions them):
        # every field its title and detail name, in order.
        fields = [
            f for t, f in _PATH.findall(f"{finding.title} {finding.detail}") if t == object_type
        ]
        names = [field_name(object_type, f, batch.crm) for f in fields]
        if batch.crm == "salesforce":
            names += [salesforce_field(object_type, h) for h in _PLACE.findall(finding.detail)]
        return ";".join(dict.fromkeys(names))
    if finding.kind == "dangling_reference":
        return _dangling_property(batch, object_type, record)
    if finding.kind == "unresolved_company_name":
        return "associatedcompanyid" if object_type == "contacts" else COMPANIES_ASSOCIATION
    return ""


def _dangling_property(batch: Batch, object_type: str, record: Record) -> str:
    """Which association names a record not in the batch: the company, else contacts."""
    index = records_by_type(batch)
    companies = [c for c in (record.company_id, *record.company_ids) if c]
    if any(c not in index["companies"] for c in companies):
        return field_name(object_type, "companyId", batch.crm)
    return CONTACTS_ASSOCIATION
