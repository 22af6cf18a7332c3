"""Money and counts as people read them: the one place that formats them.

The summary, the run page, the CSV export, the text report and the spend page all go
through these (templates through reviews.templatetags.numbers). Amounts keep their own
currency ("-€5,000", "-$5,000", never "$-5,000"); a model cost of zero is "$0", not
"$0.000000"; counts carry thousands separators ("6,000 companies")."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal
from functools import lru_cache

from babel.numbers import (
    format_currency,
    format_decimal,
    get_currency_precision,
    get_currency_symbol,
)

LOCALE = "en_US"  # how numbers are written on the pages; the currency is the amount's own
USD = "USD"


def format_money(amount: Decimal | int | float | None, currency: str | None = USD) -> str:
    """An amount in its currency: whole amounts without cents ("$410,000"), others
    with them ("€1,234.50"), or with the currency's third minor digit when it has one
    and the amount uses it ("BHD12.345"); "no amount" for None.

    Written as babel's `format_currency(value, code, "¤#,##0[.00]", locale="en_US")`
    writes it (tests/engine/test_money.py holds them equal), with babel supplying only the
    symbol: a findings-heavy review formats ~100k amounts, and babel's pattern
    machinery took 40 µs a call, 7% of the whole review."""
    if amount is None:
        return "no amount"
    value = Decimal(str(amount)) if isinstance(amount, float) else Decimal(amount)
    code = currency or USD
    if value == value.to_integral_value():
        places = ",.0f"
    elif value == value.quantize(_CENT) or _minor_digits(code) <= 2:
        places = ",.2f"
    else:  # more than cents, in a currency that counts them
        places = f",.{_minor_digits(code)}f"
    sign = "-" if value < 0 else ""
    return f"{sign}{_symbol(code)}{abs(value):{places}}"


_CENT = Decimal("0.01")


@lru_cache(maxsize=1024)
def _minor_digits(currency: str) -> int:
    """The currency's minor digits by ISO 4217 (babel's data): 2 for USD, 0 for JPY, 3
    for BHD; 2 for a code babel does not know."""
    return get_currency_precision(currency)


def plain_amount(amount: Decimal, currency: str | None) -> str:
    """An amount as a plain decimal for files: rounded to the currency's minor units
    (half to even), without trailing zeros: "42000" ($42,000.00), "60000" (¥60,000),
    "1234.5", "12.345" (BHD). The fix plan's CSV writes it, its JSON the same number."""
    unit = Decimal(1).scaleb(-_minor_digits(currency or USD))
    text = f"{amount.quantize(unit, rounding=ROUND_HALF_EVEN):f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


@lru_cache(maxsize=1024)
def _symbol(currency: str) -> str:
    """The sign of a currency as LOCALE writes it ($, €, CA$), or its code."""
    return get_currency_symbol(currency, locale=LOCALE)


def format_amounts(amounts: dict[str, Decimal]) -> str:
    """Totals in several currencies, never added up: "€410,000 and $20,000"."""
    parts = [format_money(amount, code) for code, amount in sorted(amounts.items()) if amount]
    if not parts:
        return format_money(0)
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def format_cost(usd: Decimal | int | float | None) -> str:
    """A model cost in dollars: "$0" for nothing, up to six decimals for the fractions
    of a cent a call costs ("$0.00018"), cents from a cent up ("$1.25")."""
    if usd is None:
        return "$0"
    value = Decimal(str(usd)) if isinstance(usd, float) else Decimal(usd)
    if value == 0:
        return "$0"
    if abs(value) >= Decimal("0.01"):
        return format_currency(value, USD, format="¤#,##0.00", locale=LOCALE)
    return format_currency(value, USD, format="¤#,##0.######", locale=LOCALE, currency_digits=False)


def format_count(n: int | Decimal | None) -> str:
    """6,000"""
    return format_decimal(n or 0, format="#,##0", locale=LOCALE)
