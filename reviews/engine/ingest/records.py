"""From one raw record to a Company, Contact or Deal; shared by the JSON and CSV readers.

A raw record is a dict keyed by the JSON field names (camelCase). The field tables
below say which dataclass attribute each key fills, how its value is parsed, and which
specialist owns a malformed value (docs/input.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from reviews.engine.batch import UNKNOWN_CURRENCY, Company, Contact, Deal, Lead, ValueProblem
from reviews.engine.extra_fields import NO_EXTRA
from reviews.engine.ingest.values import (
    Invalid,
    describe,
    parse_amount,
    parse_boolean,
    parse_currency,
    parse_date,
    parse_datetime,
    parse_domain,
    parse_email,
    parse_id_list,
    parse_owner,
    parse_text,
)
from reviews.engine.memo import Remembered

Record = Company | Contact | Deal | Lead


class Field(NamedTuple):
    key: str  # JSON key; also the last part of a ValueProblem path (deals[3].amount)
    attr: str
    parse: Callable[[object], object]
    category: str  # the specialist that reports a malformed value of it (docs/input.md)
    # Values repeat across records (dates, stages, owners, round amounts, people's first
    # and last names): each distinct text or integer is parsed once per batch, and the
    # records share the parsed object (for the names, the memory of their copies:
    # bench/README.md, names shared).
    repeats: bool = False


# A parse plan: (key, attr, parser, category) per field, the parsers chosen for one batch.
Plan = tuple[tuple[str, str, Callable[[object], object], str], ...]


@dataclass(frozen=True, slots=True)
class Kind:
    name: str  # the batch's list: companies, contacts, deals, leads
    make: type[Record]
    fields: tuple[Field, ...]


# Who owns a record and where it came from, on every kind (docs/input.md): kept for
# routing fixes; a malformed one is attribution's to report.
_OWNED = (
    Field("owner", "owner", parse_owner, "attribution", repeats=True),
    Field("recordSource", "record_source", parse_text, "attribution", repeats=True),
    Field("recordSourceDetail", "record_source_detail", parse_text, "attribution", repeats=True),
)

COMPANIES = Kind(
    "companies",
    Company,
    (
        Field("name", "name", parse_text, "dedup"),
        Field("domain", "domain", parse_domain, "dedup"),
        Field("enrichedAt", "enriched_at", parse_datetime, "freshness", repeats=True),
        Field("updatedAt", "updated_at", parse_datetime, "freshness", repeats=True),
        *_OWNED,
    ),
)
CONTACTS = Kind(
    "contacts",
    Contact,
    (
        Field("email", "email", parse_email, "attribution"),
        # Names feed contact_same_person, so a malformed one is dedup's to report.
        Field("firstName", "first_name", parse_text, "dedup", repeats=True),
        Field("lastName", "last_name", parse_text, "dedup", repeats=True),
        Field("companyId", "company_id", parse_text, "attribution"),
        Field("companyIds", "company_ids", parse_id_list, "attribution"),
        *_OWNED,
    ),
)
DEALS = Kind(
    "deals",
    Deal,
    (
        Field("name", "name", parse_text, "dedup"),
        Field("amount", "amount", parse_amount, "pipeline", repeats=True),
        Field("stage", "stage", parse_text, "pipeline", repeats=True),
        Field("closeDate", "close_date", parse_date, "pipeline", repeats=True),
        Field("companyId", "company_id", parse_text, "attribution"),
        Field("contactIds", "contact_ids", parse_id_list, "attribution"),
        Field("pipeline", "pipeline", parse_text, "pipeline", repeats=True),
        Field("currency", "currency", parse_currency, "pipeline", repeats=True),
        Field("companyIds", "company_ids", parse_id_list, "attribution"),
        *_OWNED,
    ),
)

# Salesforce's leads (docs/input.md): people not yet contacts. Their emails are compared
# with each other and with the contacts' (dedup); their owners are attribution's.
LEADS = Kind(
    "leads",
    Lead,
    (
        Field("email", "email", parse_email, "dedup"),
        Field("firstName", "first_name", parse_text, "dedup", repeats=True),
        Field("lastName", "last_name", parse_text, "dedup", repeats=True),
        Field("company", "company", parse_text, "dedup"),
        Field("isConverted", "converted", parse_boolean, "dedup", repeats=True),
        Field("ownerActive", "owner_active", parse_boolean, "attribution", repeats=True),
        Field("updatedAt", "updated_at", parse_datetime, "freshness", repeats=True),
        *_OWNED,
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


def field_parsers(
    kind: Kind, overrides: dict[str, Callable[[object], object]] | None = None
) -> Plan:
    """The parse plan for one batch's records of `kind`: each field's parser, or the
    override for its key (a CSV file reads amounts and dates by its own conventions);
    for fields whose values repeat, the result for each distinct text is remembered for
    this batch (a million companies carry a few thousand distinct dates)."""
    plan = []
    for key, attr, parse, category, repeats in kind.fields:
        if overrides and key in overrides:
            parse = overrides[key]
        plan.append((key, attr, _remembering(parse) if repeats else parse, category))
    return tuple(plan)


def _remembering(parse: Callable[[object], object]) -> Callable[[object], object]:
    memo = Remembered(parse)

    def parse_once(value: object) -> object:
        # Only text and integers: 1.0 and True == 1 would find the int's result, and a
        # list or object has no hash.
        if value.__class__ is not str and value.__class__ is not int:
            return parse(value)
        return memo[value]

    return parse_once


def build_record(
    kind: Kind,
    rid: str,
    index: int,
    fields: dict,
    extra: dict,
    problems: list[ValueProblem],
    plan: Plan,
) -> Record:
    """The dataclass for one record, its fields parsed by `plan` (field_parsers). Mapped
    keys are popped from `fields`, so when the JSON reader passes the same dict as
    `fields` and `extra`, what remains is exactly the unknown fields, kept without
    copying; reading record by record, it passes NO_EXTRA and keeps what remains in
    the batch's ExtraFields. A malformed value is left unset (missing) and reported on
    `problems`; a malformed currency code is ISO 4217's "no currency" (UNKNOWN_CURRENCY),
    since a missing one would be the batch's."""
    values = {}
    for key, attr, parse, category in plan:
        raw = fields.pop(key, None)
        if raw is None:
            continue
        value = parse(raw)
        if value is None:
            continue
        if value.__class__ is Invalid:
            path = f"{kind.name}[{index}].{key}"
            problems.append(ValueProblem(category, rid, path, value.message))
            if attr == "currency":  # its amount is in a currency nobody knows, not the batch's
                values[attr] = UNKNOWN_CURRENCY
            continue
        values[attr] = value
    if extra is fields and not extra:
        extra = NO_EXTRA  # a dict emptied by pop keeps its table: 272 bytes
    return kind.make(rid, index, extra=extra, **values)
