"""Contacts of one company that may be one person, for every company at once: the
name keys, the exact groups and the fuzzy pairs the dedup rule contact_same_person (and
its near misses and tuning) reads. reviews.engine.specialists.dedup explains the method."""

from __future__ import annotations

from array import array
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from reviews.engine.batch import Batch, Contact
from reviews.engine.specialists.dedup_groups import dedup_groups
from reviews.engine.specialists.grouping import block_pairs


@dataclass(slots=True)
class PersonBlocks:
    """Every company with two or more contacts (a block, numbered in order), with
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
    """Every company with two or more contacts, in the order its second contact comes,
    with its named contacts by sorted-word full name (dedup_groups' `person_key`);
    made once per batch (the rule, its near misses and its tuning read it)."""
    return batch.derive("person_blocks", _person_blocks)


def _person_blocks(batch: Batch) -> PersonBlocks:
    names = dedup_groups(batch)["person_key"]
    # A block starts at its company's first name: where the position changes.
    new_block = np.ones(len(names.positions), dtype=bool)
    new_block[1:] = names.positions[1:] != names.positions[:-1]
    first_names = np.flatnonzero(new_block)
    first_rows = names.rows[names.starts[first_names]].tolist()
    contacts = batch.contacts
    return PersonBlocks(
        company_ids=[contacts[row].company_id for row in first_rows],
        names=names.keys,
        name_block=array("q", (np.cumsum(new_block) - 1).tolist()),
        block_starts=array("q", [*first_names.tolist(), len(names.keys)]),
        name_starts=array("q", names.starts.tolist()),
        contacts=list(map(contacts.__getitem__, names.rows.tolist())),
    )


def clustered_blocks(blocks: PersonBlocks, fuzzy: dict[int, list]) -> list[int]:
    """The blocks person_clusters finds something in, in order: those with a name two or
    more contacts share, or a fuzzy pair (fuzzy_person_pairs). Nearly every company
    with two contacts is a block, and most have neither."""
    sizes = np.diff(np.frombuffer(blocks.name_starts, dtype=np.int64))
    shared = np.frombuffer(blocks.name_block, dtype=np.int64)[sizes > 1]
    return sorted({*shared.tolist(), *fuzzy})


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
