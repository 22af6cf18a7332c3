"""Fuzzy pairing of sorted keys within blocks, and clustering of the pairs, in linear
time: the machinery of the dedup rules' fuzzy matches (reviews.engine.specialists.dedup
explains the method; dedup_groups.py queries the blocks)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy
from rapidfuzz import fuzz, process


def block_pairs(
    blocks: Sequence[int], keys: Sequence[str], cutoff: float, window: int
) -> list[tuple[int, int, float]]:
    """Fuzzy pairs of sorted keys for many blocks in one pass: `keys` sorted within each
    block, the blocks side by side (`blocks[i]` is key i's block), each key compared with
    the next `window` keys of its own block. A block's keys are contiguous, so its pairs at
    distance k are the positions where blocks[i] == blocks[i + k]; rapidfuzz scores all
    of them in one C call per distance, over both cores. Returns (i, j, ratio) by i, then
    best ratio first (then j): the order of comparing each key with the next `window`
    in turn (tests/engine/specialists/test_grouping.py holds that reference)."""
    if len(keys) < 2:
        return []
    codes = numpy.asarray(blocks)
    # An object array: a distance's pairs are taken by one fancy index each, in C.
    texts = numpy.fromiter(keys, dtype=object, count=len(keys))
    found: list[tuple[int, int, float]] = []
    for distance in range(1, window + 1):
        at = numpy.flatnonzero(codes[:-distance] == codes[distance:])
        if not at.size:
            break  # no block holds more than `distance` keys: none holds more than that + 1
        scores = process.cpdist(
            texts[at],
            texts[at + distance],
            scorer=fuzz.ratio,
            score_cutoff=cutoff,
            dtype=numpy.float64,  # the float process.extract gives: ratios equal to the bit
            workers=-1,
        )
        hits = numpy.flatnonzero(scores >= cutoff)
        found.extend(
            (i, i + distance, score)
            for i, score in zip(at[hits].tolist(), scores[hits].tolist(), strict=True)
        )
    found.sort(key=lambda pair: (pair[0], -pair[2], pair[1]))
    return found


def clusters(size: int, pairs: Iterable[tuple[int, int, float]]) -> list[tuple[list[int], float]]:
    """Connected components (union-find) of items 0..size-1 joined by scored pairs, so a
    triple is one cluster; each with the score of its weakest link (100 if alone)."""
    parent = list(range(size))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    edges = list(pairs)
    for i, j, _ in edges:
        parent[root(i)] = root(j)
    weakest: dict[int, float] = {}
    for i, _, score in edges:
        r = root(i)
        weakest[r] = min(weakest.get(r, 100.0), score)
    members: dict[int, list[int]] = defaultdict(list)
    for i in range(size):
        members[root(i)].append(i)
    return [(items, weakest.get(r, 100.0)) for r, items in members.items()]
