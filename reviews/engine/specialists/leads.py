"""The rules over leads, Salesforce's fourth object (docs/rules.md): declared here and
listed in the specialists that own them, dedup (a lead that is already a contact,
leads entered twice) and attribution (leads nobody active owns). A batch without
leads (every HubSpot batch) finds nothing here.

Converted leads (IsConverted) are left out of every rule: a converted lead became the
contact it shares an email with, and Salesforce keeps it read-only."""

from __future__ import annotations

from collections.abc import Iterator

from reviews.engine.batch import Batch
from reviews.engine.findings import RawFinding, Severity
from reviews.engine.specialists.common import named, named_list
from reviews.engine.specialists.spec import ANY_RECORD, FixTarget, Kind, Merges
from reviews.engine.tables.columns import columns

W = (Severity.WARNING,)
# The generated JSON samples hold no leads (their recorded reviews stay as they are):
# samples/salesforce/ plants these, tests/samplegen/test_salesforce_org.py checks.
ONLY_FROM = "a batch with leads (Salesforce's exports, or a JSON batch's `leads`)"
_MAX_LISTED = 10  # contacts named in a detail when many share the lead's email

LEAD_ALREADY_CONTACT = Kind(
    "lead_already_contact",
    W,
    only_from=ONLY_FROM,
    label=("lead", "leads", "already a contact"),
    finds="an unconverted lead whose normalised email is a contact's: convert it into that "
    "contact, or merge it",
    reads=("leads.email", "contacts.email"),
    fix=FixTarget("leads", ""),
)
LEAD_SAME_EMAIL = Kind(
    "lead_same_email",
    W,
    only_from=ONLY_FROM,
    label=("lead group", "lead groups", "sharing an email"),
    finds="two or more unconverted leads with one normalised email",
    reads=("leads.email",),
    fix=ANY_RECORD,
    merge=Merges("leads"),
)
LEAD_NO_OWNER = Kind(
    "lead_no_owner",
    W,
    only_from=ONLY_FROM,
    label=("lead", "leads", "no owner"),
    finds="an unconverted lead with no owner: nobody follows it up",
    reads=("leads.owner",),
    fix=FixTarget("leads", "owner"),
)
LEAD_INACTIVE_OWNER = Kind(
    "lead_inactive_owner",
    W,
    only_from=ONLY_FROM,
    label=("lead", "leads", "owned by an inactive user"),
    finds="an unconverted lead whose owner is an inactive user (Salesforce's "
    "`User.IsActive` false, `ownerActive` false in a JSON batch)",
    reads=("leads.owner", "leads.ownerActive"),
    fix=FixTarget("leads", "owner"),
)
DEDUP_KINDS = (LEAD_ALREADY_CONTACT, LEAD_SAME_EMAIL)
ATTRIBUTION_KINDS = (LEAD_NO_OWNER, LEAD_INACTIVE_OWNER)


# The rules' queries over the detectors' columns (reviews.engine.tables.columns). A lead
# IsConverted is left out of every rule; one whose flag is not known is not.
OPEN = "NOT coalesce(converted, false)"
# Each open lead whose email is a contact's, with those contacts, in batch order.
ALREADY_CONTACT = f"""
SELECT leads."row", email_key, list(contacts."row" ORDER BY contacts."row")
FROM leads JOIN contacts USING (email_key) WHERE {OPEN}
GROUP BY leads."row", email_key ORDER BY leads."row"
"""  # noqa: S608 (OPEN is ours)
# Open leads sharing an email, two or more, in the order each group's second one comes.
SAME_EMAIL = f"""
SELECT email_key, list("row" ORDER BY "row") AS rows FROM leads
WHERE email_key IS NOT NULL AND {OPEN} GROUP BY email_key HAVING count(*) > 1
ORDER BY rows[2]
"""  # noqa: S608
# Open leads with no owner (none or blank) or an inactive one, in batch order.
OWNERLESS = f"""
SELECT "row", coalesce(owner, '') = '' AS no_owner FROM leads
WHERE {OPEN} AND (coalesce(owner, '') = '' OR owner_active = false) ORDER BY "row"
"""  # noqa: S608


def duplicate_findings(batch: Batch, category: str) -> Iterator[RawFinding]:
    """lead_already_contact and lead_same_email."""
    if not batch.leads:
        return
    tables = columns(batch)
    leads, contacts = batch.leads, batch.contacts
    for row, email, contact_rows in tables.query(ALREADY_CONTACT, ("leads", "contacts")):
        lead = leads[row]
        found = [contacts[r] for r in contact_rows]
        first = found[0]
        listed = "; ".join(f"{named(c)}" for c in found[:_MAX_LISTED])
        yield RawFinding(
            category=category,
            kind=LEAD_ALREADY_CONTACT.name,
            severity=Severity.WARNING,
            title=f"Lead {named(lead)} is already a contact: {named(first)}",
            detail=f"The lead's email {email} is the email of: {listed}.",
            record_ids=sorted([lead.id, *(c.id for c in found)]),
            suggested_fix=f"Convert lead {lead.id} into the existing contact {first.id} "
            "(or merge it into that contact), so it is not worked as a new prospect.",
        )
    for email, rows in tables.query(SAME_EMAIL, ("leads",)):
        group = [leads[row] for row in rows]
        ids = sorted(lead.id for lead in group)
        keep = ids[0]
        others = ", ".join(ids[1:])
        yield RawFinding(
            category=category,
            kind=LEAD_SAME_EMAIL.name,
            severity=Severity.WARNING,
            title=f"{len(group)} leads share the email {email}{named_list(group)}",
            detail=f"Leads with the email {email}: {', '.join(ids)}.",
            record_ids=ids,
            suggested_fix=f"Merge {others} into {keep}, then delete {others}.",
        )


def owner_findings(batch: Batch, category: str) -> Iterator[RawFinding]:
    """lead_no_owner and lead_inactive_owner."""
    if not batch.leads:
        return
    for row, no_owner in columns(batch).query(OWNERLESS, ("leads",)):
        lead = batch.leads[row]
        if no_owner:
            yield RawFinding(
                category=category,
                kind=LEAD_NO_OWNER.name,
                severity=Severity.WARNING,
                title=f"Lead {named(lead)} has no owner",
                detail=f"Lead {lead.id} has no owner: nobody follows it up.",
                record_ids=[lead.id],
                suggested_fix=f"Assign lead {lead.id} to an active owner or a lead queue.",
            )
        else:
            yield RawFinding(
                category=category,
                kind=LEAD_INACTIVE_OWNER.name,
                severity=Severity.WARNING,
                title=f"Lead {named(lead)} is owned by an inactive user, {lead.owner}",
                detail=f"Lead {lead.id} is owned by {lead.owner}, who is no longer an active user.",
                record_ids=[lead.id],
                suggested_fix=f"Reassign lead {lead.id} to an active owner or a lead queue.",
            )
