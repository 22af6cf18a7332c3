"""dedup's near misses: pairs the rules did not flag but that nearly match, company
names anywhere in the batch and person names within one company, for a model to judge
(reviews.engine.specialists.dedup explains the method)."""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from itertools import chain
from operator import attrgetter, itemgetter

from reviews.engine import normalize
from reviews.engine.batch import Batch, Company, Contact
from reviews.engine.rules import Rules
from reviews.engine.specialists.grouping import block_pairs
from reviews.engine.specialists.people import fuzzy_person_pairs, person_blocks
from reviews.engine.tables.columns import columns

# company_same_name is an exact rule: its threshold is a ratio of 100.
COMPANY_NAME_THRESHOLD = 100.0


def near_misses(batch: Batch, rules: Rules, limit: int) -> list[dict]:
    """Pairs the rules did not flag but that score less than rules.near_miss_points under the
    threshold: company names anywhere in the batch, person names within one company.
    Not findings: candidates for the model pass, the best `limit` by ratio."""
    if limit <= 0:
        return []
    candidates = chain(
        _company_near_misses(batch, rules),
        _person_near_misses(batch, rules),
    )
    # nlargest holds only `limit` candidates however many there are; dicts are built
    # for those alone.
    best = heapq.nlargest(limit, candidates, key=itemgetter(0))
    return [_pair(kind, a, b, score) for score, kind, a, b in best]


NearMiss = tuple[float, str, Company | Contact, Company | Contact]


# Each distinct company name and its first company, in the order the names first come.
DISTINCT_NAMES = """
SELECT name_key, min("row") AS first FROM companies_name_key
WHERE name_key IS NOT NULL GROUP BY name_key ORDER BY first
"""


def _company_near_misses(batch: Batch, rules: Rules) -> Iterator[NearMiss]:
    # Distinct names, so equal ones (already company_same_name) never pair up; a
    # stable sort, so names of the same words keep the order they first come in.
    keyed = sorted(
        (
            (normalize.sorted_words(name), row)
            for name, row in columns(batch).query(DISTINCT_NAMES, ("companies_name_key",))
        ),
        key=itemgetter(0),
    )
    keys = [key for key, _ in keyed]
    floor = COMPANY_NAME_THRESHOLD - rules.near_miss_points
    # One block: every name is compared with the next near_miss_window names.
    for i, j, score in block_pairs([0] * len(keys), keys, floor, rules.near_miss_window):
        a, b = batch.companies[keyed[i][1]], batch.companies[keyed[j][1]]
        domain = company_domain(a)
        if domain and domain == company_domain(b):
            continue  # already company_same_domain
        yield score, "company_same_name", a, b


def _person_near_misses(batch: Batch, rules: Rules) -> Iterator[NearMiss]:
    threshold = rules.person_name_fuzzy_ratio
    floor = threshold - rules.near_miss_points
    blocks = person_blocks(batch)
    for pairs in fuzzy_person_pairs(blocks, floor, rules.near_miss_window).values():
        for name_a, name_b, score in pairs:
            a, b = blocks.group(name_a)[0], blocks.group(name_b)[0]
            if score >= threshold:
                continue  # already contact_same_person
            if normalize.email(a.email) and normalize.email(a.email) == normalize.email(b.email):
                continue  # already contact_same_email
            yield score, "contact_same_person", a, b


def _pair(kind: str, a: Company | Contact, b: Company | Contact, score: float) -> dict:
    first, second = sorted([a, b], key=attrgetter("id"))
    pair = {"kind": kind, "record_ids": [first.id, second.id], "ratio": round(score, 1)}
    if isinstance(first, Contact):
        return {**pair, "names": [person(first), person(second)], "company_id": first.company_id}
    return {**pair, "names": [first.name, second.name]}


def company_domain(company: Company) -> str | None:
    """The normalised domain, or None for a free-mail one (many companies share it)."""
    value = normalize.domain(company.domain)
    return None if normalize.is_free_mail(value) else value


def person(contact: Contact) -> str:
    return " ".join(p for p in (contact.first_name, contact.last_name) if p)
