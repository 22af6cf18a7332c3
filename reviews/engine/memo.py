"""One result per distinct value, for a batch's repeated values.

A batch's values repeat (a few thousand dates or stages in a million records), so a
pure conversion of them is made once per distinct value and the result shared: by the
parse (ingest/records.py, one value at a time) and by the tables (a column at once)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


class Remembered(dict):
    """`memo[value]` is convert(value), converted the first time only. A dict, so a
    value seen before is found without running Python code (`map(memo.__getitem__,
    values)`). Keys match by ==: values that are equal but convert differently (1,
    1.0 and True) must not share one memo."""

    __slots__ = ("convert",)

    def __init__(self, convert: Callable[[Any], Any]) -> None:
        super().__init__()
        self.convert = convert

    def __missing__(self, value: Any) -> Any:
        converted = self[value] = self.convert(value)
        return converted


def once_each(convert: Callable[[Any], Any], values: Iterable) -> list:
    """convert(v) for each of `values`, None kept None, each distinct one converted
    once and the result shared."""
    memo = Remembered(convert)
    memo[None] = None
    return list(map(memo.__getitem__, values))
