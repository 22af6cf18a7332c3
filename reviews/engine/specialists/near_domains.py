"""attribution's near misses: contacts whose email domain is a subdomain or a one-letter
or hyphen variant of a company's domain, or whose company's domain is a parent or
subdomain of another company's (the subsidiary case detect() lets pass): maybe attached
to the wrong company, for a model to judge (reviews.engine.specialists.attribution)."""

from __future__ import annotations

import numpy as np

from reviews.engine.batch import Batch
from reviews.engine.rules import Rules
from reviews.engine.tables.columns import EMAIL_DOMAIN_TABLE, columns
from reviews.engine.tables.keys import company_domains

MAX_LISTED = 10  # companies named per finding or near miss when many share one domain
# The contacts' email domains but free-mail ones (columns.py makes them and their flag),
# by row: put in the contacts' order in Python (contact_email_domains), not sorted by
# DuckDB.
CONTACT_EMAIL_DOMAINS = (
    'SELECT "row", email_domain_key FROM contacts_email_domain WHERE NOT free_mail'
)

# near_misses relations, as read in a detail: "its email domain x is <phrase> co_1".
_RELATIONS = {
    "subdomain": "a subdomain of the domain of",
    "near-spelling": "one letter or hyphen away from the domain of",
    "subsidiary": "the domain of (its own company's domain is a parent or subdomain of it)",
}


class _Index:
    """Each company's normalised domain by its id, and the companies of each domain."""

    def __init__(self, batch: Batch) -> None:
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


def contact_email_domains(batch: Batch) -> list[str | None]:
    """Each contact's email domain in the contacts' order, None for one without or
    with a free-mail one."""
    found = columns(batch).arrays(CONTACT_EMAIL_DOMAINS, (EMAIL_DOMAIN_TABLE,))
    domains = np.full(len(batch.contacts), None, dtype=object)
    domains[found["row"]] = found["email_domain_key"]
    return domains.tolist()


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
        if not email_domain or own_domain == email_domain:
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
                "record_ids": sorted({contact.id, *company_ids[:MAX_LISTED]}),
                "detail": (
                    f"Contact {contact.id} ({contact.email}) is attached to "
                    f"{contact.company_id or 'no company'}; its email domain {email_domain} "
                    f"is {_RELATIONS[relation]} {', '.join(company_ids[:MAX_LISTED])}."
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


def _related(a: str, b: str) -> bool:
    """One domain is a subdomain of the other."""
    return a.endswith("." + b) or b.endswith("." + a)


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
