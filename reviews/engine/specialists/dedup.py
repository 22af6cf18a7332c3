"""dedup specialist: one company, contact or deal entered more than once (docs/rules.md).

Every rule starts from groups queried over the detectors' columns (dedup_groups):
exact rules from the records sharing a normalised key, fuzzy rules from each company's
contacts or deals. Fuzzy rules (person names, deal names) compare only inside one
company's block, and inside a block only each key with the next rules.fuzzy_window keys
in sorted order (the "sorted neighbourhood" method). A block of up to fuzzy_window + 1
keys, which is nearly every real account, is compared in full; a huge account costs
n * fuzzy_window comparisons instead of n², at the price of missing two names that
differ in their first letters and sort far apart. Names are compared as sorted
words, so "Kim Dana" matches "Dana Kim".

Deal copies are clustered (union-find, deal_copies), so a deal entered three times is
one finding. Fuzzy person matches are reported pair by pair, not chained (see
people.person_clusters).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import ROUND_DOWN, Decimal
from typing import TypeVar

from reviews.engine import normalize
from reviews.engine.batch import Batch, Company, Contact, Deal
from reviews.engine.findings import RawFinding, Severity
from reviews.engine.fixes import survivor
from reviews.engine.rules import Rules
from reviews.engine.specialists.common import (
    Exposure,
    companies_by_id,
    exposure_of,
    invalid_value_findings,
    money,
    named,
    named_list,
)
from reviews.engine.specialists.deal_copies import deal_copies
from reviews.engine.specialists.dedup_groups import dedup_groups
from reviews.engine.specialists.leads import DEDUP_KINDS, duplicate_findings
from reviews.engine.specialists.near_names import (  # noqa: F401 (near_misses: the registry's)
    company_domain,
    near_misses,
    person,
)
from reviews.engine.specialists.people import (
    clustered_blocks,
    fuzzy_person_pairs,
    person_blocks,
    person_clusters,
)
from reviews.engine.specialists.spec import (
    ANY_RECORD,
    INVALID_VALUE,
    Kind,
    Match,
    Measure,
    Merges,
    Specialist,
)

CATEGORY = "dedup"
SLICE: dict[str, tuple[str, ...]] = {
    "companies": ("id", "name", "domain"),
    "contacts": ("id", "email", "first_name", "last_name", "company_id"),
    "deals": ("id", "name", "amount", "stage", "close_date", "company_id", "contact_ids"),
}


def person_ratios(batch: Batch, rules: Rules) -> dict[str, Decimal]:
    """Each fuzzy contact_same_person group (its sorted record ids joined by ",") with
    its name ratio, rounded down to a hundredth: the value the rule compares with
    rules.person_name_fuzzy_ratio (its measure: tuning reads it). Exact-name groups are
    left out: no ratio hides them."""
    found: dict[str, Decimal] = {}
    blocks = person_blocks(batch)
    fuzzy = fuzzy_person_pairs(blocks, rules.person_name_fuzzy_ratio, rules.fuzzy_window)
    for pairs in fuzzy.values():
        for a, b, score in pairs:
            ratio = Decimal(score).quantize(Decimal("0.01"), rounding=ROUND_DOWN)
            found[",".join(_ids(blocks.group(a) + blocks.group(b)))] = ratio
    return found


# Every duplicate kind is merged by the fix plan (reviews.engine.fixes.fixplan); when
# nothing is left to merge, its task is on the first of its records, as a whole.
W, C = (Severity.WARNING,), (Severity.CRITICAL,)
SURVIVOR = ("merge_survivor_order",)
# A deal copy is told by its company, name, amount and close date, and is never a
# closed-lost deal: without one of those columns every deal "matches" on it (all names,
# amounts or dates missing are equal), so the kind is off (spec.switched_off).
DEAL_COPY = ("deals.companyId", "deals.name", "deals.amount", "deals.closeDate", "deals.stage")
SPEC = Specialist(
    category=CATEGORY,
    kinds=(
        Kind(
            "company_same_domain",
            W,
            ("company group", "company groups", "sharing a domain"),
            rules=SURVIVOR,
            finds="two or more companies with one normalised domain (free-mail domains excepted)",
            reads=("companies.domain",),
            fix=ANY_RECORD,
            merge=Merges("companies"),
        ),
        Kind(
            "company_same_name",
            W,
            ("company group", "company groups", "sharing a name"),
            rules=SURVIVOR,
            finds="two or more companies with one normalised name and different or missing "
            "domains (a free-mail domain counts as missing)",
            reads=("companies.name",),
            fix=ANY_RECORD,
            merge=Merges(
                "companies",
                check="same name, not the same domain: check they are one company "
                "(not a subsidiary or a region) before merging",
            ),
        ),
        Kind(
            "contact_same_email",
            W,
            ("contact group", "contact groups", "sharing an email"),
            rules=SURVIVOR,
            finds="two or more contacts with one normalised email",
            reads=("contacts.email",),
            fix=ANY_RECORD,
            merge=Merges("contacts"),
        ),
        Kind(
            "contact_same_person",
            W,
            ("contact group", "contact groups", "the same person twice"),
            Match.FUZZY,
            rules=("person_name_fuzzy_ratio", "fuzzy_window", *SURVIVOR),
            finds="contacts at the same company with the same full name, or names at least "
            "this similar (0-100), and not all the same email",
            reads=(("contacts.firstName", "contacts.lastName"), "contacts.companyId"),
            fix=ANY_RECORD,
            merge=Merges(
                "contacts",
                check="same or near-same name, not the same email: check they are one "
                "person before merging",
            ),
            measure=Measure("person_name_fuzzy_ratio", person_ratios, inclusive=True),
        ),
        Kind(
            "deal_entered_twice",
            C,
            ("deal group", "deal groups", "entered twice"),
            Match.FUZZY,
            rules=(
                "deal_name_fuzzy_ratio",
                "deal_amount_tolerance_pct",
                "deal_close_date_window_days",
                "fuzzy_window",
                *SURVIVOR,
            ),
            finds="deals of the same company, not closed-lost, with equal or near-equal names "
            '(the numbers in them equal: "Phase 1" is not "Phase 2"; or both unnamed), '
            "amounts within a percentage of the larger (or both missing), close dates "
            "within a number of days (or both missing)",
            reads=DEAL_COPY,
            fix=ANY_RECORD,
            merge=Merges("deals"),
        ),
        *DEDUP_KINDS,
        INVALID_VALUE,
    ),
    slice=SLICE,
    report_rank=1,
    candidate_rules=("person_name_fuzzy_ratio", "near_miss_points", "near_miss_window"),
)
# The duplicate kinds and the object their records are (derived from SPEC).
MERGE_KINDS: dict[str, str] = {k.name: k.merge.object for k in SPEC.kinds if k.merge}

R = TypeVar("R", Company, Contact, Deal)


def detect(batch: Batch, rules: Rules) -> list[RawFinding]:
    """Invalid dedup-owned values plus every dedup rule in docs/rules.md."""
    links = _Links(batch, survivor.parse_order(rules.merge_survivor_order))
    exposure = exposure_of(batch)
    return [
        *invalid_value_findings(batch, CATEGORY),
        *_company_same_domain(batch, links, exposure),
        *_company_same_name(batch, links, exposure),
        *_contact_same_email(batch, links, exposure),
        *_contact_sameperson(batch, links, exposure, rules),
        *_deals_entered_twice(batch, links, rules),
        *duplicate_findings(batch, CATEGORY),
    ]


class _Links:
    """The companies by id, and which duplicate to keep: the survivor the fix plan names
    (reviews.engine.fixes.survivor: a won deal, then the most associations, the oldest, the
    lowest id), so the suggested fix and the merge plan agree."""

    def __init__(self, batch: Batch, order: tuple[str, ...] | None = None) -> None:
        self.batch = batch
        self.companies = companies_by_id(batch)
        self.order = order or survivor.DEFAULT_ORDER

    def keeper(self, records: list[R]) -> R:
        return survivor.choose(records, self.batch, self.order).survivor

    def where(self, company_id: str) -> str:
        """'Vertex Robotics (co_201)' for titles; the bare id if the company is not here."""
        company = self.companies.get(company_id)
        return f"{company.name} ({company_id})" if company and company.name else company_id


# --- companies ------------------------------------------------------------------


def _shared(batch: Batch, key_name: str, records: str) -> Iterator[tuple[str, list]]:
    """The groups of records sharing the key `key_name` (dedup_groups: a column of
    `records`)."""
    listed = getattr(batch, records)
    for key, rows, _ in dedup_groups(batch)[key_name]:
        yield key, [listed[row] for row in rows]


def _company_same_domain(batch: Batch, links: _Links, exposure: Exposure) -> Iterator[RawFinding]:
    for domain, group in _shared(batch, "domain_key", "companies"):
        if normalize.is_free_mail(domain):
            continue  # unrelated people's one-person businesses share gmail.com
        yield _finding(
            "company_same_domain",
            title=f"{len(group)} companies share the domain {domain}{named_list(group)}",
            detail=f"Companies with the domain {domain}: {_list(group, _company_label)}.",
            records=group,
            suggested_fix=_merge_fix(links.keeper(group), group, "contacts and deals"),
            exposure=exposure.of_companies(_ids(group)),
        )


def _company_same_name(batch: Batch, links: _Links, exposure: Exposure) -> Iterator[RawFinding]:
    for _, group in _shared(batch, "name_key", "companies"):
        domains = {company_domain(c) for c in group}
        if len(domains) == 1 and None not in domains:
            continue  # one shared domain: company_same_domain already reports them
        keep = links.keeper(group)
        merge = _merge_fix(keep, group, "contacts and deals")
        yield _finding(
            "company_same_name",
            title=f'{len(group)} companies share the name "{keep.name}"{named_list(group)}',
            detail=f"Same name, different or missing domains: {_list(group, _company_label)}.",
            records=group,
            suggested_fix=f"Check whether these are one company. If so: {merge} If not "
            "(subsidiaries, regions), rename them so they can be told apart.",
            exposure=exposure.of_companies(_ids(group)),
        )


# --- contacts -------------------------------------------------------------------


def _contact_same_email(batch: Batch, links: _Links, exposure: Exposure) -> Iterator[RawFinding]:
    for email, group in _shared(batch, "email_key", "contacts"):
        yield _finding(
            "contact_same_email",
            title=f"{len(group)} contacts share the email {email}{named_list(group)}",
            detail=f"Contacts with the email {email}: {_list(group, _contact_label)}.",
            records=group,
            suggested_fix=_merge_fix(links.keeper(group), group, "deal associations"),
            exposure=exposure.of_contacts(_ids(group)),
        )


def _contact_sameperson(
    batch: Batch, links: _Links, exposure: Exposure, rules: Rules
) -> Iterator[RawFinding]:
    blocks = person_blocks(batch)
    fuzzy = fuzzy_person_pairs(blocks, rules.person_name_fuzzy_ratio, rules.fuzzy_window)
    for block in clustered_blocks(blocks, fuzzy):
        company_id = blocks.company_ids[block]
        for group, score in person_clusters(blocks, block, fuzzy.get(block, [])):
            emails = {normalize.email(c.email) for c in group}
            if len(emails) == 1 and None not in emails:
                continue  # one shared email: contact_same_email already reports them
            merge = _merge_fix(links.keeper(group), group, "deal associations")
            yield _finding(
                "contact_same_person",
                title=f"{len(group)} contacts at {links.where(company_id)} may be one person"
                f"{named_list(group)}",
                detail=f"Same or near-same name, not the same email: "
                f"{_list(group, _contact_label)}.",
                records=group,
                suggested_fix=f"Check whether these are one person. If so: {merge}",
                confidence=round(score / 100, 3),
                exposure=exposure.of_contacts(_ids(group)),
            )


# --- deals ----------------------------------------------------------------------


def _deals_entered_twice(batch: Batch, links: _Links, rules: Rules) -> Iterator[RawFinding]:
    for group, score in deal_copies(batch, rules):
        yield _deal_finding(group, score, links)


def _deal_finding(group: list[Deal], score: float, links: _Links) -> RawFinding:
    # Keep the copy already booked as won, else the survivor rule's choice.
    keep = links.keeper(group)
    where = links.where(keep.company_id)
    copies = [d for d in group if d is not keep]
    # The money at risk is what the copies add on top of the deal that really exists:
    # the double-counted pipeline (or bookings, for a won copy), not the kept deal.
    exposure = {d.id: d.amount for d in copies if d.amount and d.amount > 0}
    doubled = sum(exposure.values(), Decimal(0))
    why = (
        f"so {money(doubled, keep.currency)} is not counted twice"
        if doubled
        else "so it is counted once"
    )
    return _finding(
        "deal_entered_twice",
        severity=Severity.CRITICAL,
        title=f"Deal {named(keep)} entered {len(group)} times at {where}",
        detail=f"Same company, same or near-same name, amount and close date: "
        f"{_list(group, _deal_label)}.",
        records=group,
        suggested_fix=f"Keep {keep.id} and delete {', '.join(_ids(copies))} (or close them "
        f'as lost with the reason "duplicate"), {why}.',
        confidence=round(score / 100, 3),
        exposure=exposure,
    )


# --- shared helpers ---------------------------------------------------------------


def _finding(kind: str, records: list, severity: str = Severity.WARNING, **fields) -> RawFinding:
    """A dedup finding naming `records` by their sorted ids; `fields` are RawFinding's."""
    return RawFinding(
        category=CATEGORY, kind=kind, severity=severity, record_ids=_ids(records), **fields
    )


def _merge_fix(keep: R, group: list[R], moved: str) -> str:
    others = ", ".join(_ids([r for r in group if r is not keep]))
    return f"Merge {others} into {keep.id}: move their {moved} to {keep.id}, then delete {others}."


def _ids(records: list) -> list[str]:
    return sorted(r.id for r in records)


def _list(records: list[R], label: Callable[[R], str]) -> str:
    return "; ".join(label(r) for r in sorted(records, key=lambda r: r.id))


def _company_label(company: Company) -> str:
    name = f' "{company.name}"' if company.name else ""
    return f"{company.id}{name} ({company.domain or 'no domain'})"


def _contact_label(contact: Contact) -> str:
    name = person(contact) or "no name"
    return f"{contact.id} {name} <{contact.email or 'no email'}> (company {contact.company_id})"


def _deal_label(deal: Deal) -> str:
    closes = deal.close_date.isoformat() if deal.close_date else "no close date"
    amount = money(deal.amount, deal.currency)
    name = f'"{deal.name}"' if deal.name else "(no name)"
    return f"{deal.id} {name} {amount}, closes {closes}, stage {deal.stage}"
