"""attribution specialist: which company each contact and deal belongs to (docs/rules.md).

Decisions beyond the spec table:
- contact_wrong_company is not raised when the contact's email domain and its
  company's domain are a domain and its subdomain (eu.acme.com vs acme.com): that
  is usually a subsidiary, left to near_misses for a model to judge.
- A contact or deal whose company is not in the batch gets only the
  dangling_reference, not also contact_wrong_company or deal_contact_elsewhere
  (the missing id may be a merged-away duplicate of the other company).
- A contact with no company whose email domain belongs to a company in the batch
  is a `contact_missing_company` suggestion.
- Missing ids are named in the title and detail; record_ids holds the records that
  are in the batch.
"""

from __future__ import annotations

from reviews.engine.batch import Batch, Company, Contact, Deal
from reviews.engine.findings import RawFinding, Severity
from reviews.engine.rules import Rules
from reviews.engine.specialists.common import (
    Exposure,
    companies_by_id,
    exposure_of,
    invalid_value_findings,
    named,
)
from reviews.engine.specialists.leads import ATTRIBUTION_KINDS, owner_findings
from reviews.engine.specialists.near_domains import MAX_LISTED, near_misses  # noqa: F401
from reviews.engine.specialists.spec import INVALID_VALUE, PER_FINDING, FixTarget, Kind, Specialist
from reviews.engine.tables.columns import columns

CATEGORY = "attribution"  # near_misses, the model pass's candidates: near_domains.py
SLICE: dict[str, tuple[str, ...]] = {
    "companies": ("id", "name", "domain"),
    "contacts": ("id", "email", "company_id"),
    "deals": ("id", "name", "company_id", "contact_ids", "amount", "stage"),
}

W = (Severity.WARNING,)
SPEC = Specialist(
    category=CATEGORY,
    kinds=(
        Kind(
            "contact_wrong_company",
            W,
            ("contact", "contacts", "email domain of another company"),
            finds="a contact whose (non-free-mail) email domain is another company's domain in "
            "the batch, and not its own company's domain or a parent or subdomain of it",
            reads=("contacts.email", "contacts.companyId", "companies.domain"),
            fix=FixTarget("contacts", "companyId"),
        ),
        Kind(
            "dangling_reference",
            W,
            ("record", "records", "naming a record not in the batch"),
            finds="a contact's or deal's company (`companyId`, or any of its associated "
            "`companyIds`) or an entry of a deal's `contactIds` that names no record of the "
            "batch",
            reads=("contacts.companyId", "deals.companyId", "deals.contactIds"),
            fix=PER_FINDING,  # the contact or the deal, its company or its contacts
        ),
        Kind(
            "deal_contact_elsewhere",
            W,
            ("deal", "deals", "a contact at another company"),
            finds="a deal listing a contact who belongs to a different company than the deal "
            "(both companies in the batch)",
            reads=("deals.contactIds", "deals.companyId", "contacts.companyId"),
            fix=FixTarget("deals", "contactIds"),
        ),
        Kind(
            "unresolved_company_name",
            W,
            ("company name", "company names", "matching no single company"),
            only_from="a CSV export's Associated Company column",
            finds="an `Associated Company` name in a CSV export that no company, or several "
            "companies, of the batch have: one finding per name, listing the records left "
            "without a company",
            fix=PER_FINDING,  # the first record left without a company, its company
        ),
        Kind(
            "contact_missing_company",
            (Severity.SUGGESTION,),
            ("contact", "contacts", "no company"),
            finds="a contact with no company whose email domain is a company's in the batch",
            reads=("contacts.email", "contacts.companyId", "companies.domain"),
            fix=FixTarget("contacts", "companyId"),
        ),
        *ATTRIBUTION_KINDS,
        INVALID_VALUE,
    ),
    slice=SLICE,
    report_rank=2,
)


def detect(batch: Batch, rules: Rules) -> list[RawFinding]:
    """Each rule's records, queried over the columns; findings in the records' order,
    the contacts' before the deals'."""
    exposure = exposure_of(batch)
    findings = invalid_value_findings(batch, CATEGORY)
    findings.extend(_unresolved_names(batch, exposure))
    # A partial export (only contacts, say) leaves its references out on purpose:
    # the reference rules for the lists it lacks are off, and the run says so.
    known = {name: name not in batch.partial for name in ("companies", "contacts")}
    companies = companies_by_id(batch)
    if known["companies"]:
        for contact, finding in _contact_findings(batch, companies):
            finding.exposure = exposure.of_contacts([contact.id])
            findings.append(finding)
    rows = _query(batch, DEAL_REFERENCES, **{f"{k}_known": v for k, v in known.items()})
    if rows:
        contacts = _contacts_of(batch, [batch.deals[row] for (row,) in rows])
        for (row,) in rows:
            deal = batch.deals[row]
            for finding in _deal_findings(deal, companies, contacts, known):
                own = exposure.by_deal.get(deal.id)
                finding.exposure = {deal.id: own} if own is not None else {}
                findings.append(finding)
    findings.extend(owner_findings(batch, CATEGORY))
    return findings


# A contact or deal naming a company not in the batch: its own (companyId) or another it
# is associated with (companyIds).
NAMING_MISSING_COMPANY = """
SELECT row FROM {records}
WHERE company_id <> '' AND company_id NOT IN (SELECT id FROM companies)
UNION
SELECT link.row FROM {records}_company_ids AS link JOIN {records} USING (row)
WHERE link.id IS DISTINCT FROM company_id AND link.id NOT IN (SELECT id FROM companies)
"""
CONTACT_NAMING_MISSING_COMPANY = NAMING_MISSING_COMPANY.format(records="contacts")
# The last record of each id, as a lookup by id finds it (companies_by_id, the contacts'
# dict in detect): an id given twice means its last record.
LAST_OF_EACH_ID = """
SELECT {columns} FROM {records} WHERE row IN (SELECT max(row) FROM {records} GROUP BY id)
"""
# Contacts whose (not free-mail) email domain is another company's, and not their own
# company's or a parent or subdomain of it: contact_wrong_company, or for a contact with
# no company, contact_missing_company. A company id given twice has its last record's
# domain. The contacts are narrowed first, so only their domains' companies are listed:
# listing every domain's, the query took 5-6 s of ten million records, now 1.6-1.8 s.
CONTACT_EMAIL_ELSEWHERE = f"""
WITH keyed AS (SELECT * FROM companies JOIN companies_domain_key USING (row)),
own AS ({LAST_OF_EACH_ID.format(columns="id, domain_key", records="keyed")}),
elsewhere AS (
    SELECT c.row, own.domain_key AS own_domain, c.email_domain_key
    FROM contacts_email_domain AS c LEFT JOIN own ON own.id = c.company_id
    WHERE NOT c.free_mail
        AND c.email_domain_key IS DISTINCT FROM own.domain_key
        AND NOT coalesce(
            ends_with(own.domain_key, '.' || c.email_domain_key)
            OR ends_with(c.email_domain_key, '.' || own.domain_key), false)
), owners AS (
    SELECT domain_key, list(id ORDER BY row) AS ids FROM keyed
    WHERE domain_key IN (SELECT email_domain_key FROM elsewhere) GROUP BY domain_key
)
SELECT e.row, e.own_domain, e.email_domain_key, owners.ids
FROM elsewhere AS e JOIN owners ON owners.domain_key = e.email_domain_key
ORDER BY e.row
"""  # noqa: S608 (made of the constant above)
# Deals naming a company or contact not in the batch (each list only where the export
# has it), or listing a contact of another company (both companies in the batch). The
# pairs of different companies are narrowed first, then looked up among the companies.
DEAL_REFERENCES = f"""
WITH listed AS (
    SELECT d.row, d.company_id AS deal_company, c.id AS contact, c.company_id AS contact_company
    FROM deals_contact_ids AS link JOIN deals AS d USING (row)
    LEFT JOIN ({LAST_OF_EACH_ID.format(columns="id, company_id", records="contacts")}) AS c
        ON c.id = link.id
), elsewhere AS (
    SELECT row, deal_company, contact_company FROM listed WHERE contact_company <> deal_company
)
SELECT row FROM ({NAMING_MISSING_COMPANY.format(records="deals")}) WHERE $companies_known
UNION
SELECT row FROM listed WHERE contact IS NULL AND $contacts_known
UNION
SELECT row FROM elsewhere
WHERE deal_company IN (SELECT id FROM companies) AND contact_company IN (SELECT id FROM companies)
ORDER BY row
"""  # noqa: S608 (made of the constant above)


# The last contact of each id among $ids (a lookup by id finds the last: LAST_OF_EACH_ID).
CONTACTS_NAMED = """
SELECT id, max(row) FROM contacts WHERE id IN (SELECT unnest($ids)) GROUP BY id
"""


def _contacts_of(batch: Batch, deals: list[Deal]) -> dict[str, Contact]:
    """The contacts the deals list, by id: only theirs, not a dict of every contact
    (1.6-1.9 s of ten million records)."""
    ids = list({contact_id for deal in deals for contact_id in deal.contact_ids})
    found = _query(batch, CONTACTS_NAMED, ids=ids) if ids else []
    return {contact_id: batch.contacts[row] for contact_id, row in found}


OBJECTS = ("companies", "companies_domain_key", "contacts", "contacts_email_domain", "deals")


def _query(batch: Batch, sql: str, **params: object) -> list[tuple]:
    return columns(batch).query(sql, OBJECTS, **params)


def _contact_findings(
    batch: Batch, companies: dict[str, Company]
) -> list[tuple[Contact, RawFinding]]:
    """The contacts naming a missing company, then those whose email is elsewhere (a
    contact with both is only the first), in the contacts' order."""
    found: dict[int, tuple[Contact, RawFinding]] = {}
    for (row,) in _query(batch, CONTACT_NAMING_MISSING_COMPANY):
        contact = batch.contacts[row]
        missing = _missing_companies(contact.company_id, contact.company_ids, companies)
        found[row] = (contact, _dangling(contact, missing, "Contact"))
    for row, own_domain, email_domain, owners in _query(batch, CONTACT_EMAIL_ELSEWHERE):
        if row in found:
            continue
        contact = batch.contacts[row]
        if contact.company_id:
            finding = _wrong_company(contact, email_domain, own_domain, owners, companies)
        else:
            finding = _missing_company(contact, email_domain, owners, companies)
        found[row] = (contact, finding)
    return [found[row] for row in sorted(found)]


def _deal_findings(
    deal: Deal, companies: dict[str, Company], contacts: dict[str, Contact], known: dict
) -> list[RawFinding]:
    """The findings of a deal DEAL_REFERENCES named: what it names that is missing, the
    contacts it lists of another company."""
    found: list[RawFinding] = []
    missing: list[tuple[str, str]] = []
    if known["companies"]:
        missing = _missing_companies(deal.company_id, deal.company_ids, companies)
    elsewhere: list[Contact] = []
    for contact_id in dict.fromkeys(deal.contact_ids):  # a repeated id is one reference
        contact = contacts.get(contact_id)
        if contact is None:
            if known["contacts"]:
                missing.append(("contactIds", contact_id))
        elif _attached_elsewhere(deal, contact, companies):
            elsewhere.append(contact)
    if missing:
        found.append(_dangling(deal, missing, "Deal"))
    if elsewhere:
        found.append(_contact_elsewhere(deal, elsewhere, companies))
    return found


def _missing_companies(
    primary: str | None, associated: list[str], companies: dict[str, Company]
) -> list[tuple[str, str]]:
    """The primary company and every other associated one (companyIds) not in the batch."""
    missing = []
    if primary and primary not in companies:
        missing.append(("companyId", primary))
    for company_id in associated:
        if company_id != primary and company_id not in companies:
            missing.append(("companyIds", company_id))
    return missing


def _unresolved_names(batch: Batch, exposure: Exposure) -> list[RawFinding]:
    """An association column that held a company name no single company has: one
    finding per name, naming it and every record that used it."""
    findings = []
    for name, entry in sorted(batch.unresolved_company_names.items()):
        records, candidates = entry["records"], entry["candidates"]
        why = (
            f"{len(candidates)} companies have that name ({', '.join(candidates[:MAX_LISTED])})"
            if candidates
            else "no company in the batch has that name"
        )
        findings.append(
            RawFinding(
                category=CATEGORY,
                kind="unresolved_company_name",
                severity=Severity.WARNING,
                title=f"Company name {name!r} matches no single company "
                f"({len(records):,} record{'s' if len(records) != 1 else ''})",
                detail=(
                    f"The association column names the company {name!r}, but {why}; "
                    f"{', '.join(records[:MAX_LISTED])}"
                    f"{' and more' if len(records) > MAX_LISTED else ''} stay without a company."
                ),
                record_ids=sorted(records),
                suggested_fix=(
                    "Export with the Associated Company IDs column, or include the company "
                    "(under exactly that name) in the export."
                ),
                exposure=exposure.of_contacts(records)
                | {d: exposure.by_deal[d] for d in records if d in exposure.by_deal},
            )
        )
    return findings


def _attached_elsewhere(deal: Deal, contact: Contact, companies: dict[str, Company]) -> bool:
    """Both companies known and different. A company id missing from the batch is
    already a dangling_reference, and may be a merged-away duplicate of the other."""
    return (
        deal.company_id in companies
        and contact.company_id in companies
        and contact.company_id != deal.company_id
    )


def _dangling(record: Contact | Deal, missing: list[tuple[str, str]], noun: str) -> RawFinding:
    record_id = record.id
    fields = sorted({field for field, _ in missing})
    listed = "; ".join(f"{field} {missing_id!r}" for field, missing_id in missing)
    return RawFinding(
        category=CATEGORY,
        kind="dangling_reference",
        severity=Severity.WARNING,
        title=f"{noun} {named(record)} references missing records ({', '.join(fields)})",
        detail=f"{noun} {record_id} names records that are not in the batch: {listed}.",
        record_ids=[record_id],
        suggested_fix=(
            "Include the referenced records in the export, or fix or remove the "
            "association if they were deleted or merged."
        ),
    )


def _wrong_company(
    contact: Contact,
    email_domain: str,
    own_domain: str | None,
    owners: list[str],
    companies: dict[str, Company],
) -> RawFinding:
    attached = companies[contact.company_id]
    own = f"domain {own_domain}" if own_domain else "no domain"
    return RawFinding(
        category=CATEGORY,
        kind="contact_wrong_company",
        severity=Severity.WARNING,
        title=f"Contact {named(contact)} may be attached to the wrong company",
        detail=(
            f"Contact {contact.id} ({contact.email}) is attached to {_company(attached)}, "
            f"which has {own}, but the email domain {email_domain} belongs to "
            f"{_companies(owners, companies)}."
        ),
        record_ids=sorted({contact.id, attached.id, *owners[:MAX_LISTED]}),
        suggested_fix=(
            f"Re-associate the contact with {owners[0]} if that is their employer; "
            "otherwise correct the email address."
        ),
    )


def _missing_company(
    contact: Contact, email_domain: str, owners: list[str], companies: dict[str, Company]
) -> RawFinding:
    return RawFinding(
        category=CATEGORY,
        kind="contact_missing_company",
        severity=Severity.SUGGESTION,
        title=f"Contact {named(contact)} has no company but its email matches one",
        detail=(
            f"Contact {contact.id} ({contact.email}) is attached to no company; the email "
            f"domain {email_domain} belongs to {_companies(owners, companies)}."
        ),
        record_ids=sorted({contact.id, *owners[:MAX_LISTED]}),
        suggested_fix=f"Associate the contact with {owners[0]}.",
    )


def _contact_elsewhere(
    deal: Deal, contacts: list[Contact], companies: dict[str, Company]
) -> RawFinding:
    listed = ", ".join(f"{c.id} (at {c.company_id})" for c in contacts)
    at = _company(companies[deal.company_id])
    companies = {c.company_id for c in contacts}
    return RawFinding(
        category=CATEGORY,
        kind="deal_contact_elsewhere",
        severity=Severity.WARNING,
        title=f"Deal {named(deal)} lists contacts from another company",
        detail=f"Deal {deal.id} ({deal.name!r}) is at {at} but lists {listed}.",
        record_ids=sorted({deal.id, deal.company_id, *(c.id for c in contacts)} | companies),
        suggested_fix=(
            "Remove the contacts from the deal, or move the deal or the contacts to the "
            "right company."
        ),
    )


def _company(company: Company) -> str:
    return f"{company.id} ({company.name})" if company.name else company.id


def _companies(ids: list[str], companies: dict[str, Company]) -> str:
    named = ", ".join(_company(companies[i]) for i in ids[:MAX_LISTED])
    more = f" and {len(ids) - MAX_LISTED} more" if len(ids) > MAX_LISTED else ""
    return named + more
