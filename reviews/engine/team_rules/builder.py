"""The rule editor's common shape in SQL: property, operator, value, joined by AND. The
text it makes is a `when` like any a person types: it is parsed and checked the same way
(reviews.engine.team_rules.language), so nothing here is trusted for safety; it only
quotes names and values so that the condition says what the form said."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal, InvalidOperation

from reviews.engine.tables.build import quote

# operator -> (its words on the form, the condition with {p} the property, {v} the value)
OPERATORS: dict[str, tuple[str, str]] = {
    "is_empty": ("is empty", "coalesce(trim(CAST({p} AS VARCHAR)), '') = ''"),
    "is_not_empty": ("is not empty", "coalesce(trim(CAST({p} AS VARCHAR)), '') <> ''"),
    "equals": ("is", "CAST({p} AS VARCHAR) = {v}"),
    "not_equals": ("is not", "CAST({p} AS VARCHAR) IS DISTINCT FROM {v}"),
    "contains": ("contains", "contains(lower(CAST({p} AS VARCHAR)), lower({v}))"),
    "more_than": ("is more than", "try_cast({p} AS DOUBLE) > {n}"),
    "less_than": ("is less than", "try_cast({p} AS DOUBLE) < {n}"),
    "matches": ("matches the pattern", "regexp_full_match(CAST({p} AS VARCHAR), {v})"),
    "not_matches": (
        "does not match the pattern",
        "NOT regexp_full_match(coalesce(CAST({p} AS VARCHAR), ''), {v})",
    ),
}
# "is" and "is not" with a number: equal as text ('01234' is '01234') or as numbers, so
# a decimal column (amount reads '250000.000000' as text) and a text property holding
# '12.0' both equal 12.
_SAME = "(CAST({p} AS VARCHAR) = {v} OR try_cast(CAST({p} AS VARCHAR) AS DOUBLE) = {n})"
NUMERIC: dict[str, str] = {
    "equals": _SAME,
    "not_equals": f"NOT coalesce({_SAME}, false)",
}
NEEDS_NO_VALUE = frozenset({"is_empty", "is_not_empty"})


class BuilderError(ValueError):
    """A row of the form that makes no condition, with which and why."""


def condition(rows: Iterable[tuple[str, str, str]]) -> str:
    """The rows (property, operator, value) as one condition joined by AND; rows with no
    property are skipped. BuilderError names the row that is wrong."""
    parts = []
    for number, (prop, operator, value) in enumerate(rows, 1):
        prop = prop.strip()
        if not prop:
            continue
        if operator not in OPERATORS:
            raise BuilderError(f"row {number}: unknown operator {operator!r}")
        if operator not in NEEDS_NO_VALUE and value == "":
            raise BuilderError(f"row {number}: {OPERATORS[operator][0]} what? Give a value")
        number_text = _number(value)
        if operator in ("more_than", "less_than") and number_text is None:
            raise BuilderError(f"row {number}: {value!r} is not a number")
        template = OPERATORS[operator][1]
        if operator in NUMERIC and number_text is not None:
            template = NUMERIC[operator]
        literal = "'" + value.replace("'", "''") + "'"
        parts.append(template.format(p=quote(prop), v=literal, n=number_text))
    if not parts:
        raise BuilderError("name at least one property, or write the condition")
    return " AND ".join(parts)


def _number(value: str) -> str | None:
    """The value as a finite number's SQL literal, or None when it is not one."""
    try:
        number = Decimal(value.strip())
    except InvalidOperation:
        return None
    return str(number) if number.is_finite() else None
