"""The `when` language of a team's rules: a SQL boolean expression (DuckDB's dialect)
over one record, parsed by sqlglot and checked node by node against an allow-list.

Safe by construction: the SQL that runs is generated from the checked tree (`to_sql`),
never taken from the user's string, and every column in it is a quoted identifier the
tables hold. What is not on the lists below (a subquery, a table function, a file or
network read, a setting, getenv, a second statement) is refused with where it is.

FUNCTIONS is the published list: docs/rules.md's table is checked against it
(tests/engine/team_rules/test_language.py), so the two cannot disagree."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from reviews.engine.team_rules import growth

DIALECT = "duckdb"
AS_OF = "as_of"  # the review's as-of date, a DATE

# The published functions: name -> (a call, what it gives). The call is parsed to learn
# the sqlglot node the name becomes, so the allow-list is derived from this one table.
FUNCTIONS: dict[str, tuple[str, str]] = {
    "lower": ("lower(x)", "the text in lower case"),
    "upper": ("upper(x)", "the text in upper case"),
    "trim": ("trim(x)", "the text without leading and trailing spaces"),
    "length": ("length(x)", "the number of characters"),
    "coalesce": ("coalesce(x, y)", "the first argument that is not NULL"),
    "nullif": ("nullif(x, y)", "NULL when x = y, else x"),
    "replace": ("replace(x, 'a', 'b')", "x with every 'a' replaced by 'b'"),
    "regexp_matches": ("regexp_matches(x, '^[0-9]+$')", "whether x contains a match"),
    "regexp_full_match": ("regexp_full_match(x, '[0-9]+')", "whether all of x matches"),
    "contains": ("contains(x, 'a')", "whether x contains 'a'"),
    "starts_with": ("starts_with(x, 'a')", "whether x starts with 'a'"),
    "ends_with": ("ends_with(x, 'a')", "whether x ends with 'a'"),
    "abs": ("abs(x)", "the absolute value"),
    "round": ("round(x, 2)", "x rounded to 2 decimals"),
    "try_cast": ("try_cast(x AS INTEGER)", "x as the type, NULL when it is not one"),
    "cast": ("cast(x AS DATE)", "x as the type (or `x::DATE`); fails on a value that is not"),
    "date_diff": ("date_diff('day', a, b)", "whole days (or 'month', 'year') from a to b"),
    "len": ("len(list)", "the number of items of a list (`company_ids`, `contact_ids`)"),
    "split_part": ("split_part(x, '@', 2)", "the 2nd part of x split at '@'"),
    "left": ("left(x, 2)", "the first 2 characters"),
    "right": ("right(x, 2)", "the last 2 characters"),
    "greatest": ("greatest(x, y)", "the largest argument"),
    "least": ("least(x, y)", "the smallest argument"),
    "concat": ("concat(x, y)", "the texts joined"),
}

# The expression's own grammar: literals, names, comparisons, AND/OR/NOT, arithmetic,
# CASE, IN, BETWEEN, LIKE/ILIKE, IS [NOT] NULL, IS [NOT] DISTINCT FROM.
NODES: tuple[type[exp.Expression], ...] = (
    exp.Literal, exp.Boolean, exp.Null, exp.Column, exp.Identifier, exp.Paren,
    exp.And, exp.Or, exp.Not, exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE,
    exp.NullSafeEQ, exp.NullSafeNEQ, exp.Is, exp.In, exp.Between, exp.Like, exp.ILike,
    exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.Neg, exp.DPipe, exp.Case, exp.If,
    exp.Interval,
)  # fmt: skip
# A type, in try_cast or CAST: only plain scalar types.
TYPES = frozenset(
    {"INT", "BIGINT", "DOUBLE", "DECIMAL", "DATE", "TIMESTAMP", "TEXT", "VARCHAR", "BOOLEAN"}
)
UNITS = frozenset({"DAY", "WEEK", "MONTH", "QUARTER", "YEAR"})
# Past these the SQL generator's recursion would fail: refused in words instead.
MAX_DEPTH = 200
MAX_NODES = 5000


def _function_nodes() -> tuple[dict[type[exp.Expression], str], frozenset[str]]:
    """The sqlglot node each published function parses to; names sqlglot does not know
    (parsed as Anonymous) are allowed by name."""
    nodes: dict[type[exp.Expression], str] = {}
    anonymous = set()
    for name, (call, _what) in FUNCTIONS.items():
        node = sqlglot.parse_one(call, read=DIALECT)
        if isinstance(node, exp.Anonymous):
            anonymous.add(name)
        else:
            nodes[type(node)] = name
    return nodes, frozenset(anonymous)


_FUNCTION_NODES, _ANONYMOUS = _function_nodes()


@dataclass(frozen=True, slots=True)
class Problem:
    """What is wrong with an expression, and where (a character offset, or None)."""

    message: str
    at: int | None = None

    def text(self, source: str) -> str:
        if self.at is None:
            return self.message
        line = source.count("\n", 0, self.at) + 1
        column = self.at - (source.rfind("\n", 0, self.at) + 1) + 1
        return f"line {line}, column {column}: {self.message}"


def parse(when: str) -> tuple[exp.Expression | None, list[Problem]]:
    """The checked tree of `when`, or None and every problem found."""
    if not isinstance(when, str) or not when.strip():
        return None, [Problem("`when` must be a non-empty expression")]
    if "\x00" in when:
        return None, [Problem("`when` holds a NUL byte", when.index("\x00"))]
    try:
        statements = [s for s in sqlglot.parse(when, read=DIALECT) if s is not None]
    except ParseError as error:
        return None, [_parse_problem(when, e) for e in error.errors[:3]] or [
            Problem(f"not an expression: {error}")
        ]
    except TokenError:
        return None, [_token_problem(when)]
    except RecursionError:
        return None, [Problem(f"the expression is nested more than {MAX_DEPTH} deep")]
    except Exception as error:  # sqlglot on hostile text: a refusal, never a crash
        return None, [Problem(f"not an expression ({type(error).__name__})")]
    if len(statements) != 1:
        semicolons = [
            t.start
            for t in sqlglot.tokenize(when, read=DIALECT)
            if t.token_type == TokenType.SEMICOLON
        ]
        at = semicolons[0] if len(statements) > 1 and semicolons else None
        return None, [Problem(f"one expression only, not {len(statements)} statements", at)]
    tree = statements[0]
    problems = _check(tree, when)
    if not problems:
        grown = [Problem(why, position(node)) for why, node in growth.problems(tree)]
        problems = sorted(grown, key=lambda p: p.at or 0)  # in the source's order
    if not problems and not _is_boolean(tree):
        problems = [
            Problem(
                f"{_what(tree)} is not a condition: write a comparison, AND/OR/NOT, IS, IN, "
                "BETWEEN, LIKE or a function that answers true or false",
                len(when) - len(when.lstrip()),  # the whole expression
            )
        ]
    return (None if problems else tree), problems


# What answers true or false: the top of a `when` must be one (`amount` alone is not).
_BOOLEAN_NODES = (
    exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.NullSafeNEQ,
    exp.And, exp.Or, exp.Not, exp.Is, exp.In, exp.Between, exp.Like, exp.ILike, exp.Boolean,
)  # fmt: skip
BOOLEAN_FUNCTIONS = frozenset(
    {"regexp_matches", "regexp_full_match", "contains", "starts_with", "ends_with"}
)
BOOLEAN_COLUMNS = frozenset({"is_closed", "is_won"})  # a deal's documented booleans


def _is_boolean(node: exp.Expression) -> bool:
    """Whether a checked expression answers true or false (NULL aside)."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, _BOOLEAN_NODES):
        return True
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return node.to.this == exp.DataType.Type.BOOLEAN
    if isinstance(node, exp.Case):
        branches = [branch.args.get("true") for branch in node.args.get("ifs") or []]
        branches.append(node.args.get("default"))
        return all(b is None or isinstance(b, exp.Null) or _is_boolean(b) for b in branches)
    if isinstance(node, exp.Coalesce):
        return all(_is_boolean(arg) for arg in [node.this, *node.expressions])
    if isinstance(node, exp.Column):
        return node.name.lower() in BOOLEAN_COLUMNS
    if isinstance(node, exp.Anonymous):
        return node.name.lower() in BOOLEAN_FUNCTIONS
    return _FUNCTION_NODES.get(type(node)) in BOOLEAN_FUNCTIONS


def _check(tree: exp.Expression, source: str) -> list[Problem]:
    """Every refusal in the tree, in the source's order; a refused node's inside is
    not looked into (a subquery is one problem, not one per part of it). A tree too big
    or too deep to generate SQL from is refused as such (the walk is iterative)."""
    problems: list[Problem] = []
    stack = [(tree, 1)]
    seen = 0
    while stack:
        node, depth = stack.pop()
        seen += 1
        if depth > MAX_DEPTH or seen > MAX_NODES:
            limit = f"nested more than {MAX_DEPTH} deep" if depth > MAX_DEPTH else "too long"
            return [*problems, Problem(f"the expression is {limit}", position(node))]
        problem = _refusal(node, source)
        if problem is not None:
            problems.append(problem)
            continue
        stack.extend((child, depth + 1) for child in reversed(list(node.iter_expressions())))
    return problems


def _parse_problem(source: str, error: Mapping) -> Problem:
    line, column = error.get("line"), error.get("col")
    at = None
    if line and column:
        lines = source.split("\n")
        at = sum(len(text) + 1 for text in lines[: line - 1]) + max(column - 1, 0)
        at = min(at, len(source) - 1)
    return Problem(f"syntax error: {_in_words(error.get('description') or '')}", at)


# sqlglot's node names, as the operator a person wrote
_OPERATORS = {
    "GT": ">", "GTE": ">=", "LT": "<", "LTE": "<=", "EQ": "=", "NEQ": "<>", "And": "AND",
    "Or": "OR", "Not": "NOT", "Add": "+", "Sub": "-", "Mul": "*", "Div": "/", "Mod": "%",
    "Like": "LIKE", "ILike": "ILIKE", "Is": "IS", "In": "IN", "Between": "BETWEEN",
    "DPipe": "||", "NullSafeEQ": "IS NOT DISTINCT FROM", "NullSafeNEQ": "IS DISTINCT FROM",
}  # fmt: skip
_MISSING = re.compile(r"Required keyword: '(\w+)' missing for <class '[\w.]*?(\w+)'>")


def _in_words(description: str) -> str:
    """sqlglot's description of a syntax error, without its internals."""
    missing = _MISSING.search(description)
    if missing:
        keyword, node = missing.groups()
        operator = _OPERATORS.get(node, node.upper())
        side = "before" if keyword == "this" else "after"
        return f"something is missing {side} `{operator}`"
    if not description or "<class" in description:
        return "the expression cannot be read here"
    return description


def _token_problem(source: str) -> Problem:
    """A text ('...') or a quoted name ("...") left open, at its opening quote; else
    the text cannot be read as SQL at all."""
    opened: tuple[str, int] | None = None
    index = 0
    while index < len(source):
        char = source[index]
        if opened is None and char in "'\"":
            opened = (char, index)
        elif opened is not None and char == opened[0]:
            if source[index + 1 : index + 2] == char:  # a doubled quote is the quote
                index += 1
            else:
                opened = None
        index += 1
    if opened is not None:
        what = "text" if opened[0] == "'" else "quoted name"
        return Problem(f"syntax error: a {what} is opened here and never closed", opened[1])
    return Problem("syntax error: the expression cannot be read as SQL")


def _refusal(node: exp.Expression, source: str) -> Problem | None:
    if isinstance(node, NODES) and not isinstance(node, (exp.Column, exp.In)):
        return None
    message = _refused(node)
    if message is None:
        return None
    # A refused root (SET, PRAGMA: a statement, not an expression) is the whole text.
    if node.parent is None:
        return Problem(message, 0)
    at = position(node, exact=True)
    if at is None:  # a node sqlglot kept no place for (`?`, current_date): its text
        found = source.casefold().find(node.sql(DIALECT).casefold())
        at = found if found >= 0 else position(node)
    return Problem(message, at)


def _refused(node: exp.Expression) -> str | None:
    """Why `node` is not allowed (its place is added by _refusal), or None."""
    if isinstance(node, exp.Func):
        name = node.name.lower() if isinstance(node, exp.Anonymous) else None
        if (name in _ANONYMOUS) if name else type(node) in _FUNCTION_NODES:
            return None
        called = name or node.sql_name().lower()
        return f"function {called}() is not allowed (docs/rules.md lists those that are)"
    if isinstance(node, exp.Column):
        if node.table or node.args.get("db") or node.args.get("catalog"):
            return f"{node.sql(DIALECT)}: name a column of the record alone"
        if not isinstance(node.this, exp.Identifier):
            return f"{node.sql(DIALECT)} is not a column name"
        return None
    if isinstance(node, exp.DataType):
        if isinstance(node.parent, (exp.Cast, exp.TryCast)) and node.this.name in TYPES:
            return _decimal_params(node)
        allowed = ", ".join(sorted(TYPES))
        return f"type {node.sql(DIALECT)} is not allowed; use one of {allowed}"
    if isinstance(node, exp.DataTypeParam) and isinstance(node.parent, exp.DataType):
        return None  # a DECIMAL's precision or scale, checked with its type
    if isinstance(node, exp.Var):
        if isinstance(node.parent, (exp.DateDiff, exp.Interval)) and node.name.upper() in UNITS:
            return None
        return f"{node.name}: not a unit ({', '.join(sorted(UNITS))})"
    if isinstance(node, exp.In) and (node.args.get("query") or node.args.get("unnest")):
        return "IN takes a list of values, not a query"
    if isinstance(node, exp.In):
        return None
    if isinstance(node, (exp.Select, exp.Subquery, exp.Query)):
        return "a subquery is not allowed"
    return f"{_what(node)} is not allowed in a rule"


def _decimal_params(node: exp.DataType) -> str | None:
    """Why a type's parameters are refused: only DECIMAL's precision (1 to 38) and scale
    (0 to the precision), whole numbers, are allowed."""
    params = node.expressions
    if not params:
        return None
    values = [p.this.name if isinstance(p.this, exp.Literal) else "" for p in params]
    if node.this != exp.DataType.Type.DECIMAL or len(values) > 2:
        return f"type {node.sql(DIALECT)}: only DECIMAL takes (precision, scale)"
    if not all(v.isdigit() and len(v) <= 2 for v in values):
        return f"type {node.sql(DIALECT)}: precision and scale are whole numbers"
    precision, scale = int(values[0]), int(values[1]) if len(values) == 2 else 0
    if not 1 <= precision <= 38 or scale > precision:
        return f"type {node.sql(DIALECT)}: precision 1 to 38, scale 0 to the precision"
    return None


def _what(node: exp.Expression) -> str:
    text = node.sql(DIALECT)
    return f"`{text[:60]}`" if text else type(node).__name__


def position(node: exp.Expression, *, exact: bool = False) -> int | None:
    """The character offset where the node starts in the source: the first of the tokens
    under it (sqlglot keeps positions on tokens, not on every node), else (unless
    `exact`) its parent's."""
    starts = [n.meta["start"] for n in node.walk() if n.meta and "start" in n.meta]
    if starts:
        return min(starts)
    parent = node.parent
    while parent is not None and not exact:
        if parent.meta and "start" in parent.meta:
            return parent.meta["start"]
        parent = parent.parent
    return None


def column_names(tree: exp.Expression) -> list[str]:
    """The column names the expression reads (`as_of` aside), in order, once each."""
    names = {c.name: None for c in tree.find_all(exp.Column) if c.name.lower() != AS_OF}
    return list(names)


def resolve(
    names: list[str], columns: list[str], aliases: Mapping[str, str]
) -> tuple[dict[str, str], list[str]]:
    """Each name -> the column it reads (its own, or the one an alias names; case does
    not matter, as in DuckDB), and the names the tables do not hold."""
    by_fold = {c.casefold(): c for c in columns}
    alias_fold = {a.casefold(): c for a, c in aliases.items()}
    found, missing = {}, []
    for name in names:
        column = by_fold.get(name.casefold()) or alias_fold.get(name.casefold())
        if column is None:
            missing.append(name)
        else:
            found[name] = column
    return found, missing


def to_sql(tree: exp.Expression, columns: Mapping[str, str], as_of: dt.date) -> str:
    """The SQL of a checked tree: each name replaced by its quoted column, `as_of` by
    the date. Generated from the tree, never from the source text."""

    def rewrite(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column):
            if node.name.lower() == AS_OF:
                return exp.cast(exp.Literal.string(as_of.isoformat()), exp.DataType.build("DATE"))
            return exp.Column(this=exp.Identifier(this=columns[node.name], quoted=True))
        return node

    return tree.copy().transform(rewrite).sql(dialect=DIALECT)
