"""What a specialist declares about itself: its category and every kind of finding its
detector makes. The registry (reviews.engine.specialists) collects these; every list of
categories or kinds elsewhere (the model's reply schema, the roster, the agent choices,
the findings page's labels, docs/rules.md, the samples) is derived from it or checked
against it by tests/engine/test_registry.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from reviews.engine.findings import Severity
from reviews.engine.rules import Rules


class Match(StrEnum):
    EXACT = "exact"  # a fact: records share a normalised key, or a value is wrong
    FUZZY = "fuzzy"  # a judgement: similar names, a suspicious ratio (a model may dismiss)


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of finding. `label` is (one, many, what) for a group's heading on the
    run page: "164,977 companies: enrichment older than 180 days"; `what` may name a
    Rules field in braces ("{stale_enrichment_days}"). `rules`: the Rules fields its
    detector reads. `only_from`: set when only some inputs can give this kind (then the
    generated JSON samples cannot plant it; a test of that input does)."""

    name: str
    severities: tuple[Severity, ...]
    label: tuple[str, str, str]
    match: Match = Match.EXACT
    rules: tuple[str, ...] = ()
    only_from: str = ""

    def heading(self, n: int, rules: Rules) -> str:
        one, many, what = self.label
        return f"{n:,} {one if n == 1 else many}: {what.format(**rules.as_dict())}"


@dataclass(frozen=True, slots=True)
class Specialist:
    """A specialist: its category (also the agent's name), the kinds it finds, the record
    fields a model pass may be shown (`slice`), the Rules fields its near misses read,
    and where its findings sort among equally severe ones with equal money at risk
    (`report_rank`, 0 first)."""

    category: str
    kinds: tuple[Kind, ...]
    slice: dict[str, tuple[str, ...]]
    report_rank: int
    candidate_rules: tuple[str, ...] = field(default=())

    def kind(self, name: str) -> Kind:
        for kind in self.kinds:
            if kind.name == name:
                return kind
        raise KeyError(f"{self.category} has no kind {name!r}")


# A malformed value (docs/input.md): every specialist reports those of the fields it owns
# (reviews.engine.specialists.common.invalid_value_findings), so this one kind belongs to
# every category whose fields the ingest can find malformed.
INVALID_VALUE = Kind("invalid_value", (Severity.WARNING,), ("value", "values", "malformed"))
