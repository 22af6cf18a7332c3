"""Field values as they arrive (JSON or CSV cells) to typed values, or Invalid.

Every parser takes one raw value and returns the typed value, None when the value is
missing (null, "" or blank), or an Invalid carrying the message for a ValueProblem.
They run once per field on batches of a million records, so the happy path is a few
type checks and one constructor call, with no exceptions (email adds one measured regex)."""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, date, datetime
from decimal import Decimal

from babel.numbers import is_currency
from dateutil.parser import isoparse
from email_validator import EmailNotValidError, validate_email

_MAX_SHOWN = 60  # characters of a bad value quoted in a message
# Bounds that keep absurd values from reaching parsers that raise or crawl on them
# (Python's int() refuses over 4,300 digits) or columns that overflow (amounts are
# stored as numeric(18, 2), and as DECIMAL(38, 6) in the batch's tables): the longest
# ISO 8601 date-time is ~35 characters, and no deal is worth a trillion.
MAX_DATE_CHARS = 64
MAX_AMOUNT = Decimal(10) ** 12


class Invalid:
    """A malformed value. A plain class, not an exception: a batch may hold many."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message

    def __repr__(self) -> str:
        return f"Invalid({self.message!r})"


def describe(value: object) -> str:
    """The value as it would read in the JSON (strings quoted), cut to a sane length."""
    if value.__class__ is str and len(value) > _MAX_SHOWN:
        value = value[:_MAX_SHOWN]  # a 200 MB cell is not dumped to show 60 characters
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except ValueError:  # an int past Python's 4,300-digit str() limit, nested somewhere
        text = "a number too long to show"
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 1] + "…"


def is_blank(value: object) -> bool:
    return value is None or (value.__class__ is str and (not value or value.isspace()))


def parse_text(value: object) -> str | None | Invalid:
    """A string, kept as given."""
    if value.__class__ is str:
        return None if not value or value.isspace() else value
    if value is None:
        return None
    return Invalid(f"not a string: {describe(value)}")


def parse_owner(value: object) -> str | None | Invalid:
    """An owner's name, or HubSpot's numeric owner id (the API and a spreadsheet may
    write it as a number), as text."""
    if value.__class__ is int:
        return str(value)
    return parse_text(value)


def parse_domain(value: object) -> str | None | Invalid:
    """A string, kept as given (URL forms are fine: reviews.engine.normalize.domain strips them),
    but a domain has a dot and no inner spaces: "n/a" or "Vertex Robotics" is not one."""
    text = parse_text(value)
    if text is None or text.__class__ is Invalid:
        return text
    stripped = text.strip()
    if "." not in stripped or " " in stripped:
        return Invalid(f"not a domain: {describe(value)}")
    return text


# Plain ASCII addresses, checked strictly (dot-atom local part, host names with a
# letter-led top-level label). Measured at ~0.4µs, the same as a hand-written split
# check, against ~30µs for email-validator, which decides everything this does not
# accept (international addresses, and the truly malformed ones).
_PLAIN_EMAIL = re.compile(
    r"(?=[^@]{1,64}@)[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
    r"@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
)


def parse_email(value: object) -> str | None | Invalid:
    """A syntactically valid address (no DNS look-up), kept as given."""
    text = parse_text(value)
    if text is None or text.__class__ is Invalid:
        return text
    stripped = text.strip()
    if len(stripped) <= 254 and _PLAIN_EMAIL.fullmatch(stripped):
        return text
    try:
        # test_environment: a reserved .test domain is well-formed, only undeliverable.
        validate_email(stripped, check_deliverability=False, test_environment=True)
    except EmailNotValidError:
        return Invalid(f"not an email: {describe(value)}")
    return text


def parse_amount(value: object) -> Decimal | None | Invalid:
    """A JSON number or a numeric string ("410000", " 410000.50 ") as a Decimal.
    Booleans, NaN, infinities and anything with letters are not amounts."""
    amount = _amount(value)
    if amount is None or amount.__class__ is Invalid:
        return amount
    return plausible_amount(amount, value)


def plausible_amount(amount: Decimal, value: object) -> Decimal | Invalid:
    """`amount` (read from `value`) if under MAX_AMOUNT either way, else Invalid. Every
    amount reader ends here, so none hands the batch's tables (DECIMAL(38, 6)) more."""
    if -MAX_AMOUNT < amount < MAX_AMOUNT:
        return amount
    return Invalid(f"not a plausible amount (over {MAX_AMOUNT:,}): {describe(value)}")


def _amount(value: object) -> Decimal | None | Invalid:
    kind = value.__class__
    if kind is int:
        return Decimal(value)
    if kind is str:
        text = value.strip()
        if not text:
            return None
        if is_plain_number(text):
            return Decimal(text)
    elif kind is float:
        if math.isfinite(value):
            return Decimal(str(value))  # str: 0.1 stays 0.1, not its binary expansion
    elif kind is Decimal:
        if value.is_finite():
            return value
    elif value is None:
        return None
    return Invalid(f"not a number: {describe(value)}")


def is_plain_number(text: str) -> bool:
    """[+-]digits[.digits]: what Decimal() accepts minus NaN, Infinity, exponents and
    underscores, checked without raising."""
    body = text[1:] if text[0] in "+-" else text
    whole, _, fraction = body.partition(".")
    return (
        body.isascii()
        and (whole.isdigit() if whole else bool(fraction))
        and (fraction.isdigit() if fraction else True)
    )


def parse_datetime(value: object) -> datetime | None | Invalid:
    """ISO 8601 date or date-time, or epoch milliseconds, as an aware UTC datetime.
    A naive date-time is taken as UTC; a date is its midnight UTC."""
    parsed = _parse_moment(value)
    if parsed is None or parsed.__class__ is Invalid:
        return parsed
    zone = parsed.tzinfo
    if zone is UTC:
        return parsed
    if zone is None:
        # combine, not replace(tzinfo=UTC): the keyword path costs 2µs a call in 3.11.
        return datetime.combine(parsed.date(), parsed.time(), UTC)
    try:
        return parsed.astimezone(UTC)
    except OverflowError:  # year 1 or 9999 shifted out of range
        return Invalid(f"not a date: {describe(value)}")


def parse_date(value: object) -> date | None | Invalid:
    """As parse_datetime, reduced to the UTC calendar date."""
    parsed = _parse_moment(value)
    if parsed is None or parsed.__class__ is Invalid:
        return parsed
    zone = parsed.tzinfo
    if zone is None or zone is UTC:
        return parsed.date()
    try:
        return parsed.astimezone(UTC).date()
    except OverflowError:
        return Invalid(f"not a date: {describe(value)}")


def _parse_moment(value: object) -> datetime | None | Invalid:
    """The datetime a value names, naive or aware as written."""
    if value.__class__ is str:
        text = value.strip()
        if not text:
            return None
        if len(text) > MAX_DATE_CHARS:
            parsed = None
        elif text.isdigit() and text.isascii():
            parsed = _from_epoch_ms(int(text))
        else:
            parsed = _from_iso(text)
    elif value.__class__ is int or value.__class__ is float:
        parsed = _from_epoch_ms(value)
    elif value is None:
        return None
    elif isinstance(value, datetime):  # a typed spreadsheet cell
        return value
    elif isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    else:
        parsed = None
    if parsed is None:
        return Invalid(f"not a date: {describe(value)}")
    return parsed


def _from_iso(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        pass
    # fromisoformat covers what HubSpot sends; isoparse the rarer ISO 8601 forms.
    try:
        return isoparse(text)
    except (ValueError, OverflowError):
        return None


def _from_epoch_ms(value: int | float) -> datetime | None:
    if value.__class__ is int and not -(10**18) < value < 10**18:
        return None  # far past any datetime, and not worth a big-int division
    try:
        return datetime.fromtimestamp(value / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def parse_id_list(value: object) -> list[str] | None | Invalid:
    """A list of id strings; null and "" entries are skipped as missing."""
    if value.__class__ is list:
        ids = []
        for item in value:
            if item.__class__ is str:
                if item and not item.isspace():
                    ids.append(item)
            elif item is not None:
                return Invalid(f"not a list of ids: {describe(value)}")
        return ids
    if is_blank(value):
        return None
    return Invalid(f"not a list of ids: {describe(value)}")


def parse_currency(value: object) -> str | None | Invalid:
    """An ISO 4217 code ("EUR", " usd "), upper-cased."""
    text = parse_text(value)
    if text is None or text.__class__ is Invalid:
        return text
    code = text.strip().upper()
    if is_currency(code):
        return code
    return Invalid(f"not a currency code: {describe(value)}")


_TRUE = frozenset(
    {"true", "yes", "1", "wahr", "ja", "vrai", "oui", "verdadero", "sí", "si", "verdadeiro", "sim"}
)
_FALSE = frozenset({"false", "no", "0", "falsch", "nein", "faux", "non", "falso", "não", "nao"})


def parse_flag(value: object) -> bool | None:
    """A yes/no cell (HubSpot writes true/false; a spreadsheet a boolean), else None."""
    if value.__class__ is bool:
        return value
    if value.__class__ is int or value.__class__ is float:
        return bool(value) if value in (0, 1) else None
    if value.__class__ is str:
        text = value.strip().casefold()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    return None


def parse_boolean(value: object) -> bool | None | Invalid:
    """A yes/no field of a record (true/false, 1/0, a JSON boolean); blank is None."""
    if value is None or (value.__class__ is str and not value.strip()):
        return None
    flag = parse_flag(value)
    return Invalid(f"not true or false: {describe(value)}") if flag is None else flag


def parse_probability(value: object) -> float | None:
    """A deal probability, 0..1 ("0.2", 0.2, "20%" and "20" are 0.2), else None."""
    if value.__class__ is bool or value is None:
        return None
    if value.__class__ is str:
        text = value.strip().replace(",", ".")
        percent = text.endswith("%")
        text = text.rstrip("%").strip()
        if not text or not is_plain_number(text):
            return None
        number = float(text)
        if percent:
            number /= 100
    elif isinstance(value, int | float | Decimal):
        number = float(value)
    else:
        return None
    if not math.isfinite(number) or number < 0:
        return None
    if number > 1:
        number = number / 100 if number <= 100 else None
    return number
