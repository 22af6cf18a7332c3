"""From one raw record to a Company, Contact or Deal; shared by the JSON and CSV readers.

A raw record is a dict keyed by the JSON field names (camelCase). The field tables
below say which dataclass attribute each key fills, how its value is parsed, and which
specialist owns a malformed value (docs/input.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from reviews.engine.batch import Company, Contact, Deal, ValueProblem
from reviews.engine.ingest.values import (
    Invalid,
    describe,
    parse_amount,
    parse_currency,
    parse_date,
    parse_datetime,
    parse_domain,
    parse_email,
    parse_id_list,
    parse_text,
)

Record = Company | Contact | Deal


class Field(NamedTuple):
    key: str  # JSON key; also the last part of a ValueProblem path (deals[3].amount)
    attr: str
    parse: Callable[[object], object]
    category: str  # the specialist that reports a malformed value of it (docs/input.md)


@dataclass(frozen=True, slots=True)
class Kind:
    name: str  # the batch's list: companies, contacts, deals
    make: type[Record]
    fields: tuple[Field, ...]


COMPANIES = Kind(
    "companies",
    Company,
    (
        Field("name", "name", parse_text, "dedup"),
        Field("domain", "domain", parse_domain, "dedup"),
        Field("enrichedAt", "enriched_at", parse_datetime, "freshness"),
        Field("updatedAt", "updated_at", parse_datetime, "freshness"),
    ),
)
CONTACTS = Kind(
    "contacts",
    Contact,
    (
        Field("email", "email", parse_email, "attribution"),
        # Names feed contact_same_person, so a malformed one is dedup's to report.
        Field("firstName", "first_name", parse_text, "dedup"),
        Field("lastName", "last_name", parse_text, "dedup"),
        Field("companyId", "company_id", parse_text, "attribution"),
        Field("companyIds", "company_ids", parse_id_list, "attribution"),
    ),
)
DEALS = Kind(
    "deals",
    Deal,
    (
        Field("name", "name", parse_text, "dedup"),
        Field("amount", "amount", parse_amount, "pipeline"),
        Field("stage", "stage", parse_text, "pipeline"),
        Field("closeDate", "close_date", parse_date, "pipeline"),
        Field("companyId", "company_id", parse_text, "attribution"),
        Field("contactIds", "contact_ids", parse_id_list, "attribution"),
        Field("pipeline", "pipeline", parse_text, "pipeline"),
        Field("currency", "currency", parse_currency, "pipeline"),
        Field("companyIds", "company_ids", parse_id_list, "attribution"),
    ),
)


def record_id(value: object) -> tuple[str | None, str | None]:
    """(id, None) for a usable id, else (None, what is wrong with it)."""
    if value.__class__ is str:
        if value and not value.isspace():
            return value, None
        return None, "missing"
    if value is None:
        return None, "missing"
    return None, f"not a string: {describe(value)}"


def build_record(
    kind: Kind,
    rid: str,
    index: int,
    fields: dict,
    extra: dict,
    problems: list[ValueProblem],
    parsers: dict[str, Callable[[object], object]] | None = None,
) -> Record:
    """The dataclass for one record. Mapped keys are popped from `fields`, so when the
    JSON reader passes the same dict as `fields` and `extra`, what remains is exactly
    the unknown fields, kept without copying. A malformed value is left unset (missing)
    and reported on `problems`. `parsers` replaces a field's parser by key (a CSV file
    reads amounts and dates by its own conventions)."""
    values = {}
    for key, attr, parse, category in kind.fields:
        raw = fields.pop(key, None)
        if raw is None:
            continue
        value = parsers[key](raw) if parsers and key in parsers else parse(raw)
        if value is None:
            continue
        if value.__class__ is Invalid:
            path = f"{kind.name}[{index}].{key}"
            problems.append(ValueProblem(category, rid, path, value.message))
            continue
        values[attr] = value
    if not extra:
        extra = {}  # a dict emptied by pop keeps its table: 272 bytes against 64
    return kind.make(rid, index, extra=extra, **values)
