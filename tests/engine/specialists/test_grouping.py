"""The dedup machinery: many blocks' fuzzy pairs in one pass equal each block's own."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz, process

from reviews.engine.specialists.grouping import block_pairs

names = st.text(alphabet="abdejnot ", min_size=1, max_size=8)
blocks_of_names = st.lists(st.lists(names, min_size=1, max_size=9), max_size=12)


def similar_pairs(keys: list[str], cutoff: float, window: int) -> list:
    """The plain method block_pairs must equal: (i, j, ratio) for sorted `keys` scoring at
    least `cutoff`, each key compared with the next `window` keys only, best first."""
    found = []
    for i, key in enumerate(keys):
        following = keys[i + 1 : i + 1 + window]
        for _, score, offset in process.extract(
            key, following, scorer=fuzz.ratio, score_cutoff=cutoff, limit=None
        ):
            found.append((i, i + 1 + offset, score))
    return found


def one_block_at_a_time(blocks: list[list[str]], cutoff: float, window: int) -> list:
    """similar_pairs run block by block, positions made global."""
    found, start = [], 0
    for keys in blocks:
        found += [(start + i, start + j, s) for i, j, s in similar_pairs(keys, cutoff, window)]
        start += len(keys)
    return found


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(blocks_of_names, st.sampled_from([0, 50, 75, 90, 100]), st.integers(1, 6))
def test_block_pairs_are_the_pairs_of_each_block(blocks, cutoff, window) -> None:
    blocks = [sorted(keys) for keys in blocks]
    codes = [code for code, keys in enumerate(blocks) for _ in keys]
    keys = [key for block in blocks for key in block]
    assert block_pairs(codes, keys, cutoff, window) == one_block_at_a_time(blocks, cutoff, window)


def test_block_pairs_never_cross_blocks_and_keep_the_window() -> None:
    # "jon smith" ends block 0 and "john smith" starts block 1: side by side, not a pair.
    codes = [0, 0, 0, 1, 1]
    keys = ["ann lee", "jon smith", "jon smith", "john smith", "jon smith"]
    near = fuzz.ratio("john smith", "jon smith")
    assert block_pairs(codes, keys, 90, 5) == [(1, 2, 100.0), (3, 4, near)]
    assert block_pairs([0, 0, 0], ["jon smith", "x", "jon smith"], 90, 1) == []
