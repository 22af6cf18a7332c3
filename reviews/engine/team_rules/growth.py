"""How long a text a rule's `when` can build: at most MAX_GROWTH times the longest value
it starts from (a value of the record, a text or number written in the rule), decided
from the checked tree before anything runs (docs/rules.md, "Refused").

DuckDB's memory ceiling does not cover the strings an expression makes, and its
interrupt is not looked at inside one function call: twelve nested
`replace(x, 'a', 'aaaaaaaaaa')` asked for 10^12 times the name and took the process
down. So a text's length is bounded by the tree's shape. Of the published functions
only three make a text longer than their longest argument: `concat` and `||` (their
parts' lengths add up) and `replace` (x's length times the new text's length over the
old one's). Every other node gives back one of its arguments, a part of one, the same
characters in another case, or a boolean or a number, which is never longer than its
longest argument or a number's text."""

from __future__ import annotations

from fractions import Fraction

from sqlglot import exp

MAX_GROWTH = 16
_ADDS = (exp.Concat, exp.DPipe)


def problems(tree: exp.Expression) -> list[tuple[str, exp.Expression]]:
    """(why, where) for each place the tree can build a text longer than MAX_GROWTH
    times its longest starting value, the innermost only (what holds it is over too),
    and for each `replace` whose new text is not written out."""
    factors: dict[int, Fraction] = {}  # id(node) -> the bound on its length
    over: set[int] = set()  # nodes that are, or hold, a node over the bound
    found: list[tuple[str, exp.Expression]] = []
    # Reversed breadth-first order: every node after its children (iterative: no
    # recursion limit, whatever the depth language.parse let through).
    for node in reversed(list(tree.walk())):
        children = [] if isinstance(node, exp.Column) else list(node.iter_expressions())
        if not children:
            factors[id(node)] = Fraction(1)
            continue
        child_over = any(id(child) in over for child in children)
        if isinstance(node, _ADDS):
            factor = sum((factors[id(c)] for c in children), Fraction(0))
        elif isinstance(node, exp.Replace):
            grows = _replace_growth(node)
            if isinstance(grows, str):
                found.append((grows, node.args.get("replacement") or node))
                over.add(id(node))
                factors[id(node)] = Fraction(1)
                continue
            factor = factors.get(id(node.this), Fraction(1)) * grows
        else:
            factor = max(factors[id(c)] for c in children)
        factors[id(node)] = factor
        if child_over:
            over.add(id(node))
        elif factor > MAX_GROWTH:
            over.add(id(node))
            found.append((_too_long(node, factor), node))
    return found


def _replace_growth(node: exp.Replace) -> Fraction | str:
    """How many times longer `replace(x, old, new)` can make x: new's length over old's
    (old unknown: one character; an empty old text changes nothing), at least 1; or why
    it cannot be known."""
    new, old = node.args.get("replacement"), node.args.get("expression")
    if isinstance(new, exp.Null):
        return Fraction(1)
    if not isinstance(new, exp.Literal):
        return (
            "replace()'s new text must be written out ('...'), so how long a text it makes is known"
        )
    old_length = len(old.name) if isinstance(old, exp.Literal) else 1
    if old_length == 0:
        return Fraction(1)
    return max(Fraction(1), Fraction(len(new.name), old_length))


def _too_long(node: exp.Expression, factor: Fraction) -> str:
    what = "||" if isinstance(node, exp.DPipe) else f"{node.sql_name().lower()}()"
    times = f"{float(factor):.3g}" if factor < 1000 else f"{float(factor):.0e}"
    return (
        f"{what} builds a text up to {times} times as long as the longest value it starts "
        f"from; a rule may build at most {MAX_GROWTH} times (docs/rules.md)"
    )
