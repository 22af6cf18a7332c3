"""What a specialist declares about itself: its category and every kind of finding its
detector makes, each with every fact the rest of the review needs about it: its
severities, its label and words, the Rules fields it reads, where its fix is, whether
its records are merged, and what tuning measures. The registry
(reviews.engine.specialists) collects these; every list of categories or kinds elsewhere
(the model's reply schema, the roster, the agent choices, the findings page's labels,
the fix plan, tuning, docs/rules.md, the samples) is derived from it or checked against
it by tests/engine/test_registry.py and tests/test_docs.py.

A kind is a value, not a line in a table: whoever holds a `Kind` knows all its facts.
Kinds declared at run time (a team's own rules, to come) are `Kind`s too, handed to what
needs them beside the registry's, and need no entry anywhere else."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum

from reviews.engine.batch import Batch
from reviews.engine.findings import Severity
from reviews.engine.rules import Rules

# A batch's lists, the CRM's object types (leads: Salesforce's, empty for HubSpot).
OBJECTS = ("companies", "contacts", "deals", "leads")

# What a kind needs of the export: a field as "list.field" (the batch field by its
# docs/input.md name, "deals.stage"), or a tuple of such, any one of which will do
# (("companies.enrichedAt", "companies.updatedAt")).
Need = str | tuple[str, ...]


class Match(StrEnum):
    EXACT = "exact"  # a fact: records share a normalised key, or a value is wrong
    FUZZY = "fuzzy"  # a judgement: similar names, a suspicious ratio (a model may dismiss)


@dataclass(frozen=True, slots=True)
class FixTarget:
    """Where a finding of a kind is fixed: the fix plan's task (reviews.engine.fixes)
    is on a record of `object` and corrects its batch `field`, by the name docs/input.md
    gives it (`closeDate`; the fix plan names it as the CRM does, `closedate`); "" is the
    record as a whole (a stale company is re-enriched whole). No object: the first of
    the finding's records the batch holds. A kind without one record and field says so
    on purpose, with PER_FINDING or ANY_RECORD (below), never by leaving it out."""

    object: str | None
    field: str | None

    def __post_init__(self) -> None:
        if self.object is not None and self.object not in OBJECTS:
            raise ValueError(f"fix object {self.object!r} is not one of {', '.join(OBJECTS)}")
        if self.object is not None and self.field is None:
            raise ValueError(f'fix on {self.object}: name the field, or "" for the record')
        if self.object is None and self.field:
            raise ValueError(f"fix field {self.field!r} needs its object")


# The record and the field are read from each finding (reviews.engine.fixes.fixtasks: a
# malformed value's path, a dangling reference's side, an unresolved name's record).
PER_FINDING = FixTarget(None, None)
# The first of the finding's records the batch holds, as a whole: a duplicate the plan
# has nothing left to merge of, and a kind a model made up (no declaration to read).
ANY_RECORD = FixTarget(None, "")


@dataclass(frozen=True, slots=True)
class Merges:
    """A duplicate kind: its records of `object` are one record entered more than once,
    and the fix plan merges them into a survivor. `check`: what a person confirms
    first, for duplicates found by likeness rather than an identical key."""

    object: str
    check: str = ""

    def __post_init__(self) -> None:
        if self.object not in OBJECTS:
            raise ValueError(f"merge object {self.object!r} is not one of {', '.join(OBJECTS)}")


@dataclass(frozen=True, slots=True)
class Measure:
    """The value a detector compares with a Rules field, per record (or per group of
    records, keyed by the finding's sorted record ids joined by ","): a finding is made
    when value > rule (or >= with `inclusive`), so raising the rule hides the findings
    measuring at most the new value (below it, when inclusive). A finding with no value
    (an exact duplicate no ratio hides) is never counted as hidden. Tuning
    (reviews.engine.history.tune) proposes a new value of the rule from it. `ages`: the
    value is an age that grows between syncs (days since enrichment), so a proposal
    leaves room for the next sync's ageing."""

    rule: str
    values: Callable[[Batch, Rules], Mapping[str, int | Decimal]]
    inclusive: bool = False
    ages: bool = False


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of finding, with every fact about it.

    - `label` is (one, many, what) for a group's heading on the run page: "164,977
      companies: enrichment older than 180 days"; `what` may name a Rules field in
      braces ("{stale_enrichment_days}").
    - `finds`: what it finds, in words (docs/rules.md's "finds" cell, markdown).
    - `rules`: the Rules fields its detector reads.
    - `reads`: the fields of the export its findings stand on (Need: one field, or
      alternatives). An export whose header (or whose records' properties) lacks one
      switches the kind off (`switched_off`): its findings would say what the export
      left out, not what the CRM holds ("no stage" on every deal), and what it would
      have found is unknown, never passed
      (reviews.engine.coordinator.not_greener_when_partial).
    - `only_from`: set when only some inputs can give this kind (then the generated
      JSON samples cannot plant it; a test of that input does).
    - `fix`: where its fix is (required: PER_FINDING and ANY_RECORD say "no one field"
      on purpose); `merge`: set for a duplicate kind the fix plan merges; `measure`: set
      when tuning can propose a threshold for it (one of `rules`).
    """

    name: str
    severities: tuple[Severity, ...]
    label: tuple[str, str, str]
    match: Match = Match.EXACT
    rules: tuple[str, ...] = ()
    only_from: str = ""
    finds: str = field(kw_only=True)
    fix: FixTarget = field(kw_only=True)
    merge: Merges | None = field(default=None, kw_only=True)
    measure: Measure | None = field(default=None, kw_only=True)
    reads: tuple[Need, ...] = field(default=(), kw_only=True)

    def __post_init__(self) -> None:
        for need in self.reads:
            for name in needs_of(need):
                listed, _, field_name = name.partition(".")
                if listed not in OBJECTS or not field_name:
                    raise ValueError(
                        f"kind {self.name}: reads {name!r}; write it as LIST.FIELD, the list "
                        f"one of {', '.join(OBJECTS)}"
                    )
        if not isinstance(self.fix, FixTarget):
            raise TypeError(
                f"kind {self.name}: fix must be a FixTarget (PER_FINDING or ANY_RECORD when no "
                f"one field is), got {self.fix!r}"
            )
        if self.merge is not None and not isinstance(self.merge, Merges):
            raise TypeError(f"kind {self.name}: merge must be Merges or None, got {self.merge!r}")
        if self.measure is not None and self.measure.rule not in self.rules:
            raise ValueError(
                f"kind {self.name}: its measure's rule {self.measure.rule!r} is not a rule "
                f"it reads ({', '.join(self.rules) or 'none'})"
            )

    def heading(self, n: int, rules: Rules) -> str:
        one, many, what = self.label
        return f"{n:,} {one if n == 1 else many}: {what.format(**rules.as_dict())}"

    def phrase(self, rules: Rules) -> str:
        """One finding of the kind in words, from the same label: "deal: won without an
        amount" (the fix plan's page names each task's kind so)."""
        one, _many, what = self.label
        return f"{one}: {what.format(**rules.as_dict())}"


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


def needs_of(need: Need) -> tuple[str, ...]:
    """The fields of a Need, any one of which will do."""
    return (need,) if isinstance(need, str) else need


def switched_off(
    kinds: Iterable[Kind], exported: Mapping[str, frozenset[str]]
) -> dict[str, tuple[str, ...]]:
    """Each kind an export switches off, with the fields ("deals.stage") it lacks: a
    kind is off when one of its needs has none of its fields among `exported` (list ->
    the fields the export had a column or property for). A list `exported` does not
    name is not judged: a JSON batch names its fields record by record, and a list the
    upload left out is the partial lists' business (docs/rules.md#partial-exports)."""
    off: dict[str, tuple[str, ...]] = {}
    for kind in kinds:
        lacking: list[str] = []
        for need in kind.reads:
            fields = needs_of(need)
            judged = [f for f in fields if f.partition(".")[0] in exported]
            if len(judged) < len(fields):
                continue  # an alternative in a list the export does not describe
            if not any(f.partition(".")[2] in exported[f.partition(".")[0]] for f in fields):
                lacking.extend(fields)
        if lacking:
            off[kind.name] = tuple(dict.fromkeys(lacking))
    return off


# A malformed value (docs/input.md): every specialist reports those of the fields it owns
# (reviews.engine.specialists.common.invalid_value_findings), so this one kind belongs to
# every category whose fields the ingest can find malformed.
INVALID_VALUE = Kind(
    "invalid_value",
    (Severity.WARNING,),
    ("value", "values", "malformed"),
    finds="a malformed value, named by record and field ([input.md](input.md#bad-input))",
    fix=PER_FINDING,
)
