"""Contacts of one company that may be one person, for every company at once: the
name keys, the exact groups and the fuzzy pairs the dedup rule contact_same_person (and
its near misses and tuning) reads. reviews.engine.specialists.dedup explains the method."""

from __future__ import annotations

from array import array
from collections import defaultdict
from dataclasses import dataclass, field
from operator import itemgetter

from reviews.engine import normalize
from reviews.engine.batch import Batch, Contact
from reviews.engine.specialists.grouping import block_pairs, each, groups


@dataclass(slots=True)
class PersonBlocks:
    """Every company with two or more contacts (a block, numbered in batch order), with
    its contacts' distinct sorted-word full names (a "name", numbered across blocks, in
    key order within a block). Flat lists, not a dict per company and a list per name:
    those took three times the memory (1.2 GB at ten million records)."""

    company_ids: list[str] = field(default_factory=list)  # block -> its company id
    names: list[str] = field(default_factory=list)  # name -> its key
    name_block: array = field(default_factory=lambda: array("q"))  # name -> its block
    # block -> its first name; name -> its first contact; each with one more for the end
    block_starts: array = field(default_factory=lambda: array("q"))
    name_starts: array = field(default_factory=lambda: array("q"))
    contacts: list[Contact] = field(default_factory=list)  # by name, in batch order

    def names_of(self, block: int) -> range:
        return range(self.block_starts[block], self.block_starts[block + 1])

    def group(self, name: int) -> list[Contact]:
        """The contacts of one name, in batch order."""
        return self.contacts[self.name_starts[name] : self.name_starts[name + 1]]


def person_blocks(batch: Batch) -> PersonBlocks:
    """Every company with two or more contacts, in batch order, with its contacts by
    sorted-word full name; contacts without a name are left out."""
    blocks = PersonBlocks()
    for block, (company_id, contacts) in enumerate(
        groups(batch.contacts, each(batch.contacts, "company_id"))
    ):
        blocks.company_ids.append(company_id)
        blocks.block_starts.append(len(blocks.names))
        named = []
        for contact in contacts:
            # person_name's words, sorted (person_name + sorted_words, in one pass).
            key = normalize.word_set_key(f"{contact.first_name or ''} {contact.last_name or ''}")
            if key:
                named.append((key, contact))
        named.sort(key=itemgetter(0))  # stable: one name's contacts stay in batch order
        previous = None
        for key, contact in named:
            if key != previous:
                blocks.names.append(key)
                blocks.name_block.append(block)
                blocks.name_starts.append(len(blocks.contacts))
                previous = key
            blocks.contacts.append(contact)
    blocks.block_starts.append(len(blocks.names))
    blocks.name_starts.append(len(blocks.contacts))
    return blocks


def person_clusters(
    blocks: PersonBlocks, block: int, pairs: list[tuple[int, int, float]]
) -> list[tuple[list[Contact], float]]:
    """One block's exact name groups (in the order their first contact comes in the
    batch), then each fuzzy-matching pair of its names (fuzzy_person_pairs) with its
    ratio. Fuzzy pairs are not chained: Jon ~ John and John ~ Joan does not make Jon and
    Joan one person, and chaining would glue a large account's similar names into one
    blob."""
    exact = [blocks.group(n) for n in blocks.names_of(block)]
    found = [(group, 100.0) for group in exact if len(group) > 1]
    found.sort(key=lambda exact_group: exact_group[0][0].index)
    return found + [(blocks.group(a) + blocks.group(b), score) for a, b, score in pairs]


def fuzzy_person_pairs(
    blocks: PersonBlocks, cutoff: float, window: int
) -> dict[int, list[tuple[int, int, float]]]:
    """For each block (by number) with such names, the pairs of its different names
    (by number) scoring at least `cutoff`, with the ratio (below 100: the names differ).
    Every block's sorted names side by side, paired in one pass (grouping.block_pairs)."""
    pairs: dict[int, list[tuple[int, int, float]]] = defaultdict(list)
    for i, j, score in block_pairs(blocks.name_block, blocks.names, cutoff, window):
        pairs[blocks.name_block[i]].append((i, j, score))
    return pairs
