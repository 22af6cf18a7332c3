"""The review's rules as data: every threshold that decides a finding, a candidate for
the model pass or the risk tier, with its default. Plain Python, no Django.

settings.REVIEW_RULES is `Rules.from_env(os.environ)` (the one place the environment is
read); the detectors, the risk tier and the model pass receive the object. A later
per-dataset policy is this object with overrides (`with_overrides`), validated the same
way. `describe()` lists every field with its default, setting and meaning (docs/rules.md
and the tests are checked against it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from decimal import Decimal, InvalidOperation
from typing import Any


def _rule(default: Any, env: str, meaning: str, *, low: int = 0, high: int | None = None):
    return field(
        default=default, metadata={"env": env, "meaning": meaning, "low": low, "high": high}
    )


def _kind(spec) -> type:
    if spec.type in ("Decimal", Decimal):
        return Decimal
    return str if spec.type in ("str", str) else int


def _check_text(name: str, value: str) -> None:
    """A text rule holds a list its own module checks (the survivor order)."""
    from reviews.engine.fixes.survivor import parse_order  # the criteria are declared there

    try:
        parse_order(value)
    except ValueError as error:
        raise ValueError(f"rule {name}: {error}") from None


@dataclass(frozen=True, slots=True)
class Rules:
    # dedup (reviews.engine.specialists.dedup)
    person_name_fuzzy_ratio: int = _rule(
        92,
        "RULE_PERSON_NAME_FUZZY_RATIO",
        "two person names at one company this similar (0-100) are one person",
        high=100,
    )
    deal_name_fuzzy_ratio: int = _rule(
        90,
        "RULE_DEAL_NAME_FUZZY_RATIO",
        "two deal names at one company this similar (0-100) may be one deal",
        high=100,
    )
    deal_amount_tolerance_pct: Decimal = _rule(
        Decimal("1"),
        "RULE_DEAL_AMOUNT_TOLERANCE_PCT",
        "duplicate deals' amounts are within this percentage of the larger",
        high=100,
    )
    deal_close_date_window_days: int = _rule(
        31,
        "RULE_DEAL_CLOSE_DATE_WINDOW_DAYS",
        "duplicate deals' close dates are at most this many days apart",
    )
    fuzzy_window: int = _rule(
        50,
        "RULE_FUZZY_WINDOW",
        "a name is fuzzy-compared with this many of its successors in sorted order "
        "(a block of up to this many + 1 names is compared in full)",
        low=1,
    )
    # merges (reviews.engine.fixes.survivor): the record dedup's suggested fix keeps, and the
    # survivor of each merge in the fix plan
    merge_survivor_order: str = _rule(
        "won,associations,oldest,lowest_id",
        "RULE_MERGE_SURVIVOR_ORDER",
        "which duplicate survives a merge: criteria in order, from won, associations, "
        "oldest, lowest_id (comma-separated)",
    )
    # pipeline (reviews.engine.specialists.pipeline)
    amount_typo_factor: Decimal = _rule(
        Decimal("100"),
        "RULE_AMOUNT_TYPO_FACTOR",
        "a deal at least this many times its company's median amount looks like a typo",
        low=1,
    )
    amount_typo_min_deals: int = _rule(
        3,
        "RULE_AMOUNT_TYPO_MIN_DEALS",
        "the company needs at least this many deals with an amount above 0 for the median",
        low=2,
    )
    # freshness (reviews.engine.specialists.freshness)
    stale_enrichment_days: int = _rule(
        180,
        "RULE_STALE_ENRICHMENT_DAYS",
        "a company enriched more than this many whole days before the as-of date is stale",
    )
    # candidates for the model pass (near misses: not findings, hints for a model)
    near_miss_points: int = _rule(
        10,
        "RULE_NEAR_MISS_POINTS",
        "a name pair scoring less than this many points under its rule's ratio is a candidate",
        high=100,
    )
    near_miss_window: int = _rule(
        5,
        "RULE_NEAR_MISS_WINDOW",
        "a name is compared with this many of its successors when looking for candidates",
        low=1,
    )
    stale_soon_days: int = _rule(
        14,
        "RULE_STALE_SOON_DAYS",
        "a company turning stale within this many days is a candidate",
    )
    closing_soon_days: int = _rule(
        7,
        "RULE_CLOSING_SOON_DAYS",
        "an open deal without an amount closing within this many days is a candidate",
    )
    # the risk tier (reviews.engine.risk)
    tier_trivial_max_score: int = _rule(
        8, "TIER_TRIVIAL_MAX_SCORE", "a batch scoring up to this is trivial"
    )
    tier_lite_max_score: int = _rule(
        20, "TIER_LITE_MAX_SCORE", "a batch scoring up to this (above trivial) is lite"
    )
    high_value_deal_amount: Decimal = _rule(
        Decimal("100000"),
        "HIGH_VALUE_DEAL_AMOUNT",
        "a won or contract-sent deal of at least this amount raises the tier one step",
    )

    def __post_init__(self) -> None:
        for spec in fields(self):
            value = getattr(self, spec.name)
            kind = _kind(spec)
            if type(value) is not kind:
                raise ValueError(
                    f"rule {spec.name} must be {_noun(kind)}, got {type(value).__name__} {value!r}"
                )
            if kind is str:
                _check_text(spec.name, value)
                continue
            low, high = spec.metadata["low"], spec.metadata["high"]
            if kind is Decimal and not value.is_finite():
                raise ValueError(f"rule {spec.name} must be a finite number, got {value}")
            if value < low or (high is not None and value > high):
                bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
                raise ValueError(f"rule {spec.name} must be {bounds}, got {value}")
        if self.tier_lite_max_score < self.tier_trivial_max_score:
            raise ValueError(
                f"rule tier_lite_max_score ({self.tier_lite_max_score}) must be at least "
                f"tier_trivial_max_score ({self.tier_trivial_max_score})"
            )

    # --- building one -------------------------------------------------------------------

    def with_overrides(self, overrides: Mapping[str, Any]) -> Rules:
        """These rules with some fields changed, by field name. An unknown name, a value
        of the wrong type or out of range raises ValueError naming the field."""
        known = {spec.name: spec for spec in fields(self)}
        unknown = sorted(set(overrides) - set(known))
        if unknown:
            raise ValueError(
                f"unknown rule{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                f"known: {', '.join(known)}"
            )
        changes = {name: _coerce(known[name], value) for name, value in overrides.items()}
        return replace(self, **changes)

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Rules:
        """The defaults, with each field whose setting (RULE_..., TIER_..., ...) is set
        and not empty in `environ` read from it. ValueError names the setting."""
        changes: dict[str, Any] = {}
        for spec in fields(cls):
            raw = environ.get(spec.metadata["env"], "")
            if raw.strip():
                try:
                    changes[spec.name] = _coerce(spec, raw.strip())
                except ValueError as error:
                    raise ValueError(f"{spec.metadata['env']}: {error}") from None
        try:
            return cls().with_overrides(changes)
        except ValueError as error:
            raise ValueError(f"review rules from the environment: {error}") from None

    # --- reading one --------------------------------------------------------------------

    def as_dict(self) -> dict[str, int | Decimal | str]:
        """{field: value}, in declaration order (the cache key and the model's context)."""
        return asdict(self)

    @classmethod
    def describe(cls) -> list[RuleInfo]:
        """Every field with its default, setting and meaning, in declaration order."""
        return [
            RuleInfo(
                name=spec.name,
                setting=spec.metadata["env"],
                default=spec.default,
                meaning=spec.metadata["meaning"],
            )
            for spec in fields(cls)
        ]

    @classmethod
    def setting_of(cls, name: str) -> str:
        """The environment variable of field `name` (KeyError if there is none)."""
        return {info.name: info.setting for info in cls.describe()}[name]


@dataclass(frozen=True, slots=True)
class RuleInfo:
    name: str
    setting: str
    default: int | Decimal | str
    meaning: str


DEFAULT_RULES = Rules()


def _coerce(spec, value: Any) -> int | Decimal:
    """`value` as the field's type: an int field takes an int or a string of one; a
    Decimal field takes an int, a Decimal or a string of a number. Not a bool, and not a
    float (a binary fraction is not the number that was written)."""
    kind = _kind(spec)
    wrong = ValueError(
        f"rule {spec.name} must be {_noun(kind)}, got {type(value).__name__} {value!r}"
    )
    if kind is str:
        if isinstance(value, str):
            return value
        raise wrong
    if isinstance(value, bool) or isinstance(value, float):
        raise wrong
    if kind is int:
        if isinstance(value, int):
            return value
        if isinstance(value, str):
            try:
                return int(value)
            except ValueError:
                raise wrong from None
        raise wrong
    if isinstance(value, Decimal | int):
        return Decimal(value)
    if isinstance(value, str):
        try:
            return Decimal(value)
        except InvalidOperation:
            raise wrong from None
    raise wrong


def _noun(kind: type) -> str:
    return {int: "an integer", str: "text"}.get(kind, "a number")
