"""Amounts, currencies and dates as people write them (CSV exports, Excel saves).

A CSV cell is text a person or a spreadsheet formatted: "$410,000.00", "410.000,00 €",
"07/31/2026 14:00", "31.07.2026". Which separator is the decimal one, and whether
07/08 is July or August, is a property of the file, not the cell: hubspot_csv infers
it from the values that settle it (decimal_separator_of, date_order_of) and passes it
to the per-value parsers here. Values as the JSON batch and HubSpot write them are
parsed by reviews.engine.ingest.values."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from decimal import Decimal
from functools import lru_cache

from babel.numbers import is_currency
from dateutil import parser as dateparser
from price_parser import Price

from reviews.engine.ingest.values import (
    Invalid,
    describe,
    is_plain_number,
    parse_amount,
    parse_datetime,
    plausible_amount,
)

_SEPARATORS = ".,"
_GROUPING = " '\u00a0\u202f\u2019"  # also thousands separators: spaces, apostrophes
_MINUS = "-\u2212"


def written_decimal_separator(text: str) -> str | None:
    """The decimal separator a written amount settles by itself, else None:
    "1,234.50" -> ".", "410.000,00" -> ",", "1,5" -> ",", "1.000.000" -> ",";
    "410.000" and "250,000" settle nothing (a decimal point or a thousands separator)."""
    if text.isdigit():  # the common case: HubSpot writes plain numbers
        return None
    digits = _number_part(text)
    seen = [c for c in digits if c in _SEPARATORS]
    if not seen:
        return None
    if len(set(seen)) == 2:
        return seen[-1]
    mark = seen[0]
    if len(seen) > 1:  # repeated: a thousands separator
        return "," if mark == "." else "."
    if len(digits) - digits.index(mark) - 1 != 3:  # 1.5, 410000.50
        return mark
    return None


def decimal_separator_of(texts) -> str | None:
    """The decimal separator of a column: the one its values settle, when they agree."""
    votes = {written_decimal_separator(t) for t in texts if t} - {None}
    return votes.pop() if len(votes) == 1 else None


def parse_written_amount(value: object, decimal_separator: str | None) -> Decimal | None | Invalid:
    """A formatted amount ("$410,000.00", "-$5,000", "($5,000)", "410.000,00 €",
    "EUR 1.234,5") as a Decimal, reading separators by the value itself, else by the
    file's `decimal_separator`. One that stays ambiguous is Invalid, naming both readings."""
    if value.__class__ is not str:
        return parse_amount(value)
    text = value.strip()
    if not text:
        return None
    if is_plain_number(text) and ("." not in text or decimal_separator != ","):
        if "." not in text or decimal_separator == "." or written_decimal_separator(text):
            return plausible_amount(Decimal(text), value)
    body = _number_part(text)
    rest = text.replace(body, " ", 1)
    negative = any(c in rest for c in _MINUS) or (text.startswith("(") and text.endswith(")"))
    if not body or not all(_is_currency_token(t) for t in rest.strip("()" + _MINUS).split()):
        return Invalid(f"not a number: {describe(value)}")
    # The file's separator when its values agree on one (a value that settles it by
    # itself then agrees too); else what this value settles on its own.
    mark = decimal_separator or written_decimal_separator(body)
    separators = [c for c in body if c in _SEPARATORS]
    if mark is None and separators:
        point = _reading(body.replace(separators[0], "."))
        grouped = _reading(body.replace(separators[0], ""))
        return Invalid(
            f"ambiguous amount: {describe(value)} is {point} (decimal {separators[0]!r}) or "
            f"{grouped} (thousands {separators[0]!r}); nothing in the file settles which"
        )
    number = body
    for c in _GROUPING:
        number = number.replace(c, "")
    if mark:
        thousands = "," if mark == "." else "."
        whole, _, fraction = number.rpartition(mark) if mark in number else (number, "", "")
        number = whole.replace(thousands, "") + ("." + fraction if fraction else "")
        if mark in whole:
            return Invalid(f"not a number: {describe(value)}")
    if not is_plain_number(number):
        return Invalid(f"not a number: {describe(value)}")
    amount = Decimal(number)
    return plausible_amount(-amount if negative else amount, value)


def _reading(number: str) -> str:
    for c in _GROUPING:
        number = number.replace(c, "")
    return f"{Decimal(number).normalize():f}" if is_plain_number(number) else number


# From the first digit to the last; what lies between must be digits and separators.
_DIGITS_SPAN = re.compile(r"[0-9](?:.*[0-9])?")
_NUMBER_BODY = re.compile(r"[0-9][0-9.,' \u00a0\u202f\u2019]*")


def _number_part(text: str) -> str:
    """The digits of a written amount with the separators between them: "1,234.50"."""
    span = _DIGITS_SPAN.search(text)
    if span is None:
        return ""
    body = span.group()
    return body if _NUMBER_BODY.fullmatch(body) else ""


def currency_in_amount(value: object) -> str | None:
    """The ISO 4217 code a written amount names by code or by an unambiguous symbol
    ("€410.000" -> EUR, "USD 5" -> USD); "$" alone is not one: many currencies use it."""
    if value.__class__ is not str or (value.isascii() and value.upper() == value.lower()):
        return None  # no letter and no symbol beyond ASCII: "$410,000.00", "410000"
    found = Price.fromstring(value).currency
    if not found:
        return None
    found = found.strip().upper()
    if found in _SYMBOLS:
        return _SYMBOLS[found]
    return found if is_currency(found) else None


_SYMBOLS = {"€": "EUR", "£": "GBP", "¥": "JPY", "R$": "BRL", "₹": "INR", "CHF": "CHF"}


# Symbols an amount may carry besides ISO codes (which babel checks).
_CURRENCY_SYMBOLS = frozenset(
    "$ US$ € £ ¥ ₹ R$ A$ C$ CA$ HK$ NZ$ S$ Fr. kr zł ₩ ₽ ₺ ₪ ₫ ₱ ฿ Kč Ft".split()
)


def _is_currency_token(token: str) -> bool:
    token = token.strip("()" + _MINUS)
    if not token or token in _CURRENCY_SYMBOLS:
        return True
    return token.isalpha() and len(token) == 3 and is_currency(token.upper())


def written_date_order(text: str) -> str | None:
    """MDY or DMY when a numeric date settles it (a day above 12), else None.
    Dotted dates (31.07.2026) are day first wherever they are written."""
    head = text.strip().split(" ")[0].split("T")[0]
    for mark in "/.-":
        parts = head.split(mark)
        if len(parts) == 3 and all(p.isdigit() for p in parts) and len(parts[2]) == 4:
            if mark == ".":
                return "DMY"
            first, second = int(parts[0]), int(parts[1])
            if first > 12 >= second:
                return "DMY"
            if second > 12 >= first:
                return "MDY"
    return None


def date_order_of(texts, default: str) -> str:
    """The order of day and month in a column: what its values settle when they
    agree, else `default` (the CSV_DATE_ORDER setting)."""
    votes = {written_date_order(t) for t in texts if t} - {None}
    return votes.pop() if len(votes) == 1 else default


def parse_written_datetime(value: object, order: str) -> datetime | None | Invalid:
    """ISO forms as parse_datetime; else a written date with or without time
    ("07/31/2026", "31.07.2026 14:00", "Jul 31, 2026"), day and month by `order`
    unless the value settles it. Naive times are UTC."""
    text = value.strip() if value.__class__ is str else ""
    if not text or text[:4].isdigit():  # ISO (year first) or epoch ms: the fast parsers
        parsed = parse_datetime(value)
        if parsed.__class__ is not Invalid:
            return parsed
    else:
        parsed = Invalid(f"not a date: {describe(value)}")
    moment = _from_written(text, order)
    if moment is None:
        return parsed
    return (
        datetime.combine(moment.date(), moment.time(), UTC)
        if moment.tzinfo is None
        else (moment.astimezone(UTC))
    )


def parse_written_date(value: object, order: str) -> date | None | Invalid:
    parsed = parse_written_datetime(value, order)
    return parsed if parsed is None or parsed.__class__ is Invalid else parsed.date()


# Two different defaults: a text that leaves the year, month or day out parses to two
# different dates, so a partial date is refused instead of completed with today's.
_DEFAULTS = (datetime(2001, 1, 1), datetime(2002, 2, 2))


@lru_cache(maxsize=4096)  # a file repeats its dates: each distinct one is parsed once
def _from_written(text: str, order: str) -> datetime | None:
    if not text or len(text) > 40 or not any(c.isdigit() for c in text):
        return None
    settled = written_date_order(text)
    dayfirst = (settled or order) == "DMY"
    try:
        first, second = (dateparser.parse(text, dayfirst=dayfirst, default=d) for d in _DEFAULTS)
    except (ValueError, OverflowError):
        return None
    if first.date() != second.date():
        return None
    return first
