"""A dataset's health score, defined once (docs/history.md, "Health score").

100 when no record of the batch has an open problem, 0 when every record has an open
critical one: 100 x (1 - weighted broken records / records), where

- a record counts once, at the most severe open problem that names it (a record named by
  three warnings is one warning record);
- a record with an open critical weighs 1, one whose worst is a warning weighs 1/4;
  suggestions are advice and weigh nothing (as in reviews.engine.at_risk);
- "open" is what the run reports: new or still open, not what the team dismissed
  (suppressed findings are never passed in);
- the score is rounded down to one decimal, so 100.0 means nothing is open at all and a
  single critical among 100,000 records still shows 99.9;
- a batch without records has no score (None): there was nothing to measure.

Records are counted by id as findings name them (a finding of a duplicate pair names both)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import ROUND_FLOOR, Decimal
from typing import Protocol

from reviews.engine.findings import Severity

WEIGHTS: dict[str, Decimal] = {
    Severity.CRITICAL.value: Decimal(1),
    Severity.WARNING.value: Decimal("0.25"),
}
PERFECT = Decimal(100)
_TENTH = Decimal("0.1")


class Problem(Protocol):
    """What the score reads of a finding: a RawFinding or a stored Finding row."""

    severity: str
    record_ids: Sequence[str]


def health_score(records: int, problems: Iterable[Problem]) -> Decimal | None:
    """The health of a batch of `records` records whose open findings are `problems`:
    a Decimal from 0.0 to 100.0 (one decimal), or None for an empty batch."""
    if records <= 0:
        return None
    worst: dict[str, Decimal] = {}  # record id -> the weight of its most severe problem
    for problem in problems:
        weight = WEIGHTS.get(str(problem.severity))
        if weight is None:
            continue
        for record_id in problem.record_ids:
            if weight > worst.get(record_id, Decimal(0)):
                worst[record_id] = weight
    # A finding may name an id the batch's counts do not hold (an associated record):
    # the broken never outnumber the records, so the score stays within 0 to 100.
    broken = min(sum(worst.values(), Decimal(0)), Decimal(records))
    score = PERFECT * (1 - broken / records)
    return score.quantize(_TENTH, rounding=ROUND_FLOOR)
