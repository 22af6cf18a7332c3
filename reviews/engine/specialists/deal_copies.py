"""Which deals are copies of one deal (the dedup rule deal_entered_twice): deals of one
company, not closed-lost, whose names match (fuzzy, sorted neighbourhood: dedup's
docstring explains the method), whose names carry the same numbers, and whose amounts
and close dates are close. Copies are clustered (union-find), so a deal entered three
times is one group."""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal

from reviews.engine import normalize
from reviews.engine.batch import Batch, Deal
from reviews.engine.memo import Remembered
from reviews.engine.rules import Rules
from reviews.engine.specialists.dedup_groups import dedup_groups
from reviews.engine.specialists.grouping import block_pairs, clusters

# The key of every deal whose name cleans to nothing (none, blank, only punctuation,
# NUL or lone surrogates): one name, "no name", equal to itself and to no folded name,
# which holds only a-z, 0-9 and spaces. So two unnamed copies of a deal pair up (then
# the amount and date tests decide) and sort first in their company's block.
NO_NAME = "\x00"
_DIGITS = re.compile(r"\d+")


def deal_copies(batch: Batch, rules: Rules) -> list[tuple[list[Deal], float]]:
    """Each group of copies, in batch order, with the ratio of its weakest name match."""
    # Every company's candidates (dedup_groups' `deal_block`) side by side, paired by
    # name in one pass; then the amount and date tests for the pairs whose names match.
    codes: list[int] = []
    keys: list[str] = []
    deals: list[Deal] = []
    key_of = Remembered(_deal_key)  # one key per distinct name: renewals share theirs
    for code, (_, rows, _) in enumerate(dedup_groups(batch)["deal_block"]):
        candidates = [(key_of[deal.name], deal) for deal in map(batch.deals.__getitem__, rows)]
        # Sorting by name, then date and amount, puts copies of one deal side by side
        # even in an account with many same-named deals (renewals).
        candidates.sort(key=lambda kd: (kd[0], kd[1].close_date or date.min, kd[1].amount or 0))
        codes += [code] * len(candidates)
        keys += [key for key, _ in candidates]
        deals += [deal for _, deal in candidates]
    pairs = [
        (i, j, score)
        for i, j, score in block_pairs(codes, keys, rules.deal_name_fuzzy_ratio, rules.fuzzy_window)
        if _same_deal(keys[i], keys[j], deals[i], deals[j], rules)
    ]
    # Clusters never cross companies (no pair does): only the paired deals take part.
    paired = sorted({i for pair in pairs for i in pair[:2]})
    position = {index: at for at, index in enumerate(paired)}
    return [
        ([deals[paired[m]] for m in members], score)
        for members, score in clusters(
            len(paired), [(position[i], position[j], s) for i, j, s in pairs]
        )
    ]


def _deal_key(name: str | None) -> str:
    return normalize.word_set_key(name) or NO_NAME


def _same_deal(key_a: str, key_b: str, a: Deal, b: Deal, rules: Rules) -> bool:
    """Two deals whose names match: the same deal if their names carry the same numbers
    and their amounts and close dates are close."""
    if _DIGITS.findall(key_a) != _DIGITS.findall(key_b):
        return False  # "Phase 1" and "Phase 2", "Renewal 2025" and "2026": different deals
    return _amounts_close(a.amount, b.amount, rules.deal_amount_tolerance_pct) and _dates_close(
        a.close_date, b.close_date, rules.deal_close_date_window_days
    )


def _amounts_close(a: Decimal | None, b: Decimal | None, pct: Decimal) -> bool:
    """Within pct percent of the larger amount. A missing amount only matches another
    missing one: an amount filled in on one copy is a real difference."""
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) * 100 <= max(abs(a), abs(b)) * pct


def _dates_close(a: date | None, b: date | None, days: int) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs((a - b).days) <= days
