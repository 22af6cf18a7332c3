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

from reviews.engine import normalize
from reviews.engine.batch import Batch, Company, Contact, Deal
from reviews.engine.findings import RawFinding, Severity
from reviews.engine.rules import Rules
from reviews.engine.specialists.common import (
    Exposure,
    companies_by_id,
    company_domains,
    contact_email_domains,
    exposure_of,
    invalid_value_findings,
    named,
)
from reviews.engine.specialists.leads import ATTRIBUTION_KINDS, owner_findings
from reviews.engine.specialists.spec import INVALID_VALUE, PER_FINDING, FixTarget, Kind, Specialist

CATEGORY = "attribution"
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

_MAX_LISTED = 10  # companies named per finding when many share one domain

# near_misses relations, as read in a detail: "its email domain x is <phrase> co_1".
_RELATIONS = {
    "subdomain": "a subdomain of the domain of",
    "near-spelling": "one letter or hyphen away from the domain of",
    "subsidiary": "the domain of (its own company's domain is a parent or subdomain of it)",
}


class _Index:
    """Companies by id and by normalised domain, contacts by id: one pass each."""

    def __init__(self, batch: Batch) -> None:
        self.companies = companies_by_id(batch)
        self.contacts: dict[str, Contact] = {c.id: c for c in batch.contacts}
        self.companies_known = True  # False: a partial export without companies
        self.contacts_known = True
        self.domain_of: dict[str, str | None] = {}
        # domain -> its company's id, or the ids of the companies sharing it: a list per
        # domain took 260 MB for ten million records, nearly every domain one company's
        self._owners: dict[str, str | list[str]] = {}
        for company, key in zip(batch.companies, company_domains(batch), strict=True):
            self.domain_of[company.id] = key
            if not key:
                continue
            found = self._owners.get(key)
            if found is None:
                self._owners[key] = company.id
            elif found.__class__ is list:
                found.append(company.id)
            else:
                self._owners[key] = [found, company.id]

    def owners(self, domain: str | None) -> list[str] | None:
        """The ids of the companies with this normalised domain, in batch order."""
        found = self._owners.get(domain)
        return [found] if found.__class__ is str else found

    def has_owner(self, domain: str) -> bool:
        return domain in self._owners


def detect(batch: Batch, rules: Rules) -> list[RawFinding]:
    index = _Index(batch)
    exposure = exposure_of(batch)
    findings = invalid_value_findings(batch, CATEGORY)
    # A partial export (only contacts, say) leaves its references out on purpose:
    # the reference rules for the lists it lacks are off, and the run says so.
    index.companies_known = "companies" not in batch.partial
    index.contacts_known = "contacts" not in batch.partial
    findings.extend(_unresolved_names(batch, exposure))
    for contact, email_domain in zip(batch.contacts, contact_email_domains(batch), strict=True):
        finding = _check_contact(contact, email_domain, index)
        if finding:
            finding.exposure = exposure.of_contacts([contact.id])
            findings.append(finding)
    for deal in batch.deals:
        for finding in _check_deal(deal, index):
            own = exposure.by_deal.get(deal.id)
            finding.exposure = {deal.id: own} if own is not None else {}
            findings.append(finding)
    findings.extend(owner_findings(batch, CATEGORY))
    return findings


def near_misses(batch: Batch, rules: Rules, limit: int) -> list[dict]:
    """Contacts whose email domain is a subdomain or a one-letter / hyphen variant of
    another company's domain, or that detect() let pass as a subsidiary: maybe
    attached to the wrong company, for a model to judge."""
    if limit <= 0:
        return []
    index = _Index(batch)
    near: dict[str, tuple[str, list[str]] | None] = {}  # per email domain, computed once
    found: list[dict] = []
    for contact, email_domain in zip(batch.contacts, contact_email_domains(batch), strict=True):
        if len(found) >= limit:
            break
        own_domain = index.domain_of.get(contact.company_id) if contact.company_id else None
        if not email_domain or own_domain == email_domain or normalize.is_free_mail(email_domain):
            continue
        if email_domain not in near:
            near[email_domain] = _near_domain(email_domain, index)
        candidate = _subsidiary(email_domain, own_domain, index) or near[email_domain]
        if candidate is None or contact.company_id in candidate[1]:
            continue
        relation, company_ids = candidate
        found.append(
            {
                "kind": "email_domain_near_company",
                "relation": relation,
                "record_ids": sorted({contact.id, *company_ids[:_MAX_LISTED]}),
                "detail": (
                    f"Contact {contact.id} ({contact.email}) is attached to "
                    f"{contact.company_id or 'no company'}; its email domain {email_domain} "
                    f"is {_RELATIONS[relation]} {', '.join(company_ids[:_MAX_LISTED])}."
                ),
            }
        )
    return found


def _subsidiary(
    email_domain: str, own_domain: str | None, index: _Index
) -> tuple[str, list[str]] | None:
    """The case detect() lets pass: another company has the contact's email domain,
    but the contact's own company has a parent or subdomain of it."""
    owners = index.owners(email_domain)
    if owners and own_domain and _related(own_domain, email_domain):
        return "subsidiary", owners
    return None


def _check_contact(contact: Contact, email_domain: str | None, index: _Index) -> RawFinding | None:
    if not index.companies_known:
        return None
    missing = _missing_companies(contact.company_id, contact.company_ids, index)
    if missing:
        return _dangling(contact, missing, "Contact")
    if not email_domain:
        return None
    own_domain = index.domain_of[contact.company_id] if contact.company_id else None
    if own_domain == email_domain:
        return None  # the common case, settled before the dearer checks below
    owners = index.owners(email_domain)
    if not owners or normalize.is_free_mail(email_domain):
        return None
    if not contact.company_id:
        return _missing_company(contact, email_domain, owners, index)
    if own_domain and _related(own_domain, email_domain):
        return None
    return _wrong_company(contact, email_domain, own_domain, owners, index)


def _check_deal(deal: Deal, index: _Index) -> list[RawFinding]:
    found: list[RawFinding] = []
    missing: list[tuple[str, str]] = []
    if index.companies_known:
        missing = _missing_companies(deal.company_id, deal.company_ids, index)
    elsewhere: list[Contact] = []
    for contact_id in dict.fromkeys(deal.contact_ids):  # a repeated id is one reference
        contact = index.contacts.get(contact_id)
        if contact is None:
            if index.contacts_known:
                missing.append(("contactIds", contact_id))
        elif _attached_elsewhere(deal, contact, index):
            elsewhere.append(contact)
    if missing:
        found.append(_dangling(deal, missing, "Deal"))
    if elsewhere:
        found.append(_contact_elsewhere(deal, elsewhere, index))
    return found


def _missing_companies(
    primary: str | None, associated: list[str], index: _Index
) -> list[tuple[str, str]]:
    """The primary company and every other associated one (companyIds) not in the batch."""
    missing = []
    if primary and primary not in index.companies:
        missing.append(("companyId", primary))
    for company_id in associated:
        if company_id != primary and company_id not in index.companies:
            missing.append(("companyIds", company_id))
    return missing


def _unresolved_names(batch: Batch, exposure: Exposure) -> list[RawFinding]:
    """An association column that held a company name no single company has: one
    finding per name, naming it and every record that used it."""
    findings = []
    for name, entry in sorted(batch.unresolved_company_names.items()):
        records, candidates = entry["records"], entry["candidates"]
        why = (
            f"{len(candidates)} companies have that name ({', '.join(candidates[:_MAX_LISTED])})"
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
                    f"{', '.join(records[:_MAX_LISTED])}"
                    f"{' and more' if len(records) > _MAX_LISTED else ''} stay without a company."
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


def _attached_elsewhere(deal: Deal, contact: Contact, index: _Index) -> bool:
    """Both companies known and different. A company id missing from the batch is
    already a dangling_reference, and may be a merged-away duplicate of the other."""
    return (
        deal.company_id in index.companies
        and contact.company_id in index.companies
        and contact.company_id != deal.company_id
    )


def _related(a: str, b: str) -> bool:
    """One domain is a subdomain of the other."""
    return a.endswith("." + b) or b.endswith("." + a)


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
    index: _Index,
) -> RawFinding:
    attached = index.companies[contact.company_id]
    own = f"domain {own_domain}" if own_domain else "no domain"
    return RawFinding(
        category=CATEGORY,
        kind="contact_wrong_company",
        severity=Severity.WARNING,
        title=f"Contact {named(contact)} may be attached to the wrong company",
        detail=(
            f"Contact {contact.id} ({contact.email}) is attached to {_company(attached)}, "
            f"which has {own}, but the email domain {email_domain} belongs to "
            f"{_companies(owners, index)}."
        ),
        record_ids=sorted({contact.id, attached.id, *owners[:_MAX_LISTED]}),
        suggested_fix=(
            f"Re-associate the contact with {owners[0]} if that is their employer; "
            "otherwise correct the email address."
        ),
    )


def _missing_company(
    contact: Contact, email_domain: str, owners: list[str], index: _Index
) -> RawFinding:
    return RawFinding(
        category=CATEGORY,
        kind="contact_missing_company",
        severity=Severity.SUGGESTION,
        title=f"Contact {named(contact)} has no company but its email matches one",
        detail=(
            f"Contact {contact.id} ({contact.email}) is attached to no company; the email "
            f"domain {email_domain} belongs to {_companies(owners, index)}."
        ),
        record_ids=sorted({contact.id, *owners[:_MAX_LISTED]}),
        suggested_fix=f"Associate the contact with {owners[0]}.",
    )


def _contact_elsewhere(deal: Deal, contacts: list[Contact], index: _Index) -> RawFinding:
    listed = ", ".join(f"{c.id} (at {c.company_id})" for c in contacts)
    at = _company(index.companies[deal.company_id])
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


def _near_domain(email_domain: str, index: _Index) -> tuple[str, list[str]] | None:
    """(relation, company ids) for a domain no company has but one nearly has."""
    if index.has_owner(email_domain):
        return None
    parent = email_domain
    while parent.count(".") >= 2:  # stop above the bare top-level domain
        parent = parent.split(".", 1)[1]
        if index.has_owner(parent):
            return "subdomain", index.owners(parent)
    for variant in _spelling_variants(email_domain):
        if index.has_owner(variant):
            return "near-spelling", index.owners(variant)
    return None


def _spelling_variants(value: str) -> list[str]:
    """The domain without its hyphens, and with any one letter of its first label
    dropped (catches a doubled or stray letter: vertexrobotiics -> vertexrobotics)."""
    label, _, rest = value.partition(".")
    suffix = f".{rest}" if rest else ""
    variants = [value.replace("-", "")]
    variants += [label[:i] + label[i + 1 :] + suffix for i in range(len(label))]
    return [v for v in variants if v != value]


def _company(company: Company) -> str:
    return f"{company.id} ({company.name})" if company.name else company.id


def _companies(ids: list[str], index: _Index) -> str:
    named = ", ".join(_company(index.companies[i]) for i in ids[:_MAX_LISTED])
    more = f" and {len(ids) - _MAX_LISTED} more" if len(ids) > _MAX_LISTED else ""
    return named + more
