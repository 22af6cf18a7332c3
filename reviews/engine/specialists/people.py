"""Contacts of one company that may be one person, for every company at once: the
name keys, the exact groups and the fuzzy pairs the dedup rule contact_same_person (and
its near misses and tuning) reads. reviews.engine.specialists.dedup explains the method."""

from __future__ import annotations

from collections import defaultdict

from reviews.engine import normalize
from reviews.engine.batch import Batch, Contact
from reviews.engine.specialists.grouping import block_pairs, each, groups

PersonBlock = tuple[str, dict[str, list[Contact]]]  # a company id, its contacts by name key


def person_blocks(batch: Batch) -> list[PersonBlock]:
    """Every company with two or more contacts, in batch order, with its contacts by
    sorted-word full name; contacts without a name are left out."""
    blocks = []
    for company_id, contacts in groups(batch.contacts, each(batch.contacts, "company_id")):
        by_name: dict[str, list[Contact]] = defaultdict(list)
        for contact in contacts:
            # person_name's words, sorted (person_name + sorted_words, in one pass).
            key = normalize.word_set_key(f"{contact.first_name or ''} {contact.last_name or ''}")
            if key:
                by_name[key].append(contact)
        blocks.append((company_id, by_name))
    return blocks


def person_clusters(
    by_name: dict[str, list[Contact]], pairs: list[tuple[str, str, float]]
) -> list[tuple[list[Contact], float]]:
    """Exact name groups, then each fuzzy-matching pair of names with its ratio. Fuzzy
    pairs are not chained: Jon ~ John and John ~ Joan does not make Jon and Joan one
    person, and chaining would glue a large account's similar names into one blob."""
    found = [(group, 100.0) for group in by_name.values() if len(group) > 1]
    return found + [(by_name[a] + by_name[b], score) for a, b, score in pairs]


def fuzzy_person_pairs(
    blocks: list[PersonBlock], cutoff: float, window: int
) -> dict[int, list[tuple[str, str, float]]]:
    """For each block (by position) with such names, the pairs of different names
    scoring at least `cutoff`, with the ratio (below 100: the names differ). Every
    block's sorted names side by side, paired in one pass (grouping.block_pairs)."""
    codes: list[int] = []
    keys: list[str] = []
    for code, (_, by_name) in enumerate(blocks):
        if len(by_name) > 1:
            names = sorted(by_name)
            keys += names
            codes += [code] * len(names)
    pairs: dict[int, list[tuple[str, str, float]]] = defaultdict(list)
    for i, j, score in block_pairs(codes, keys, cutoff, window):
        pairs[codes[i]].append((keys[i], keys[j], score))
    return pairs
