"""From HubSpot rows (CSV exports or CRM API objects) to a Batch: shared by both readers.

A reader hands over one Table per export: each row's id, its fields keyed as in
columns.COLUMNS, and its other columns. Here the rows become records, and what only the
whole export can settle is settled: how the file writes amounts and dates, the company
currency, which company an association by name means, which lists the export left out
(partial), and the as-of time when none is given."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import partial

from reviews.engine import normalize
from reviews.engine.batch import Batch, Company, Stage, ValueProblem, stage_key
from reviews.engine.ingest.columns import KINDS
from reviews.engine.ingest.records import Record, build_record, field_parsers
from reviews.engine.ingest.values import (
    parse_amount,
    parse_currency,
    parse_datetime,
    parse_flag,
    parse_probability,
)
from reviews.engine.ingest.written import (
    currency_in_amount,
    date_order_of,
    decimal_separator_of,
    parse_written_amount,
    parse_written_date,
    parse_written_datetime,
)

ID_SEPARATOR = ";"  # HubSpot joins several associated ids in one cell with ";"
_DATE_KEYS = ("closeDate", "updatedAt", "enrichedAt")
_AMOUNT_KEYS = ("amount", "amountCompany")


@dataclass(slots=True)
class Table:
    """One export: a file of one kind, or one object type of an API dump."""

    name: str  # the file name, for the ignored-columns list
    kind: str  # companies, contacts, deals
    rows: list[tuple[str, dict, dict]]  # (record id, fields, other columns)
    ignored: list[str] = field(default_factory=list)
    written: bool = True  # CSV text as people write it; False: API values
    # The keys of columns.COLUMNS the export had a column (or property) for, blank or
    # not; None: not known (an API list with no objects and no declared properties).
    columns: frozenset[str] | None = None
    # header (or API property name) -> the field it filled: a team's rule may name a
    # field by its column header (reviews/engine/tables/)
    headers: dict[str, str] = field(default_factory=dict)


# Columns that fill a field of the batch other than their own (settled in assemble):
# every associated company or a company's name gives the record its company, a website
# its domain, the amount in company currency its amount.
FILLS = {
    "companyIds": ("companyId",),
    "companyName": ("companyId",),
    "website": ("domain",),
    "amountCompany": ("amount",),
}


def exported_fields(columns: frozenset[str]) -> frozenset[str]:
    """The batch fields (docs/input.md names) an export with these columns fills."""
    return columns.union(*(FILLS.get(column, ()) for column in columns))


def assemble(
    tables: dict[str, Table],
    *,
    as_of: datetime | None,
    received_at: datetime,
    date_order: str,
    source: str,
) -> Batch:
    problems: list[ValueProblem] = []
    records: dict[str, list[Record]] = {"companies": [], "contacts": [], "deals": []}
    by_name: list[tuple[Record, str]] = []  # records associated by company name
    newest: datetime | None = None
    currency: str | None = None
    observed: dict[tuple[str, str], Stage] = {}
    for kind_name, table in tables.items():
        parsers = _parsers(table, date_order)
        if kind_name == "deals":
            currency = _company_currency(table, parsers)
            observed = observe_stages(table)
        kind = KINDS[kind_name]
        plan = field_parsers(kind, parsers)
        out = records[kind_name]
        for rid, fields, extra in table.rows:
            stamp = parsers["updatedAt"](fields["updatedAt"]) if "updatedAt" in fields else None
            if stamp.__class__ is datetime and (newest is None or stamp > newest):
                newest = stamp
            if kind_name == "companies":
                _domain_from_website(fields, extra)
            else:
                _associations(fields)
            if kind_name == "deals":
                _money(fields, extra, currency)
                for key in STATE_KEYS:
                    if key in fields:
                        extra.setdefault(key, fields.pop(key))
            name = fields.pop("companyName", None)
            record = build_record(kind, rid, len(out), fields, extra, problems, plan)
            for key, value in fields.items():  # read but not a field of this kind
                record.extra.setdefault(key, value)
            if name and not getattr(record, "company_id", None):
                by_name.append((record, name))
            elif name:  # the id column settled it; the name stays visible
                record.extra.setdefault("companyName", name)
            out.append(record)
    if currency:  # every amount names its currency, so titles and details can show it
        for deal in records["deals"]:
            if deal.currency is None:
                deal.currency = currency
    partial_lists = [name for name in ("companies", "contacts", "deals") if name not in tables]
    unresolved: dict[str, dict] = {}
    if "companies" in tables:
        unresolved = _resolve_names(by_name, records["companies"])
    if as_of:
        as_of_source = "given"
    elif newest:
        as_of, as_of_source = newest, "last_modified"
    else:
        as_of, as_of_source = received_at, "upload"
    return Batch(
        id=None,
        as_of=as_of,
        source=source,
        companies=records["companies"],
        contacts=records["contacts"],
        deals=records["deals"],
        pipelines={},
        value_problems=problems,
        partial=partial_lists,
        ignored_columns={t.name: t.ignored for t in tables.values() if t.ignored},
        exported_fields={
            name: exported_fields(t.columns) for name, t in tables.items() if t.columns is not None
        },
        as_of_source=as_of_source,
        currency=currency,
        unresolved_company_names=unresolved,
        observed_stages=observed,
        field_headers={name: t.headers for name, t in tables.items() if t.headers},
        property_names={name: t.ignored for name, t in tables.items() if t.ignored},
    )


STATE_KEYS = ("isClosedWon", "isClosed", "probability")


def observe_stages(table: Table) -> dict[tuple[str, str], Stage]:
    """What HubSpot's own state columns say of each (pipeline, stage) of the deals
    export: closed and won from Is Closed Won / Is Deal Closed?, else from the deal
    probability (1: won, 0: lost, between: open). Folded keys, as Batch looks them up;
    the first deal of a stage that says anything settles it."""
    observed: dict[tuple[str, str], Stage] = {}
    for _, fields, _ in table.rows:
        stage = fields.get("stage")
        if stage.__class__ is not str or not stage.strip():
            continue
        pipeline = fields.get("pipeline")
        key = (stage_key(pipeline if pipeline.__class__ is str else ""), stage_key(stage))
        if key in observed:
            continue
        state = _state(fields)
        if state is not None:
            closed, won, probability = state
            observed[key] = Stage(id=stage.strip(), closed=closed, won=won, probability=probability)
    return observed


def _state(fields: dict) -> tuple[bool, bool, float | None] | None:
    won = parse_flag(fields.get("isClosedWon"))
    closed = parse_flag(fields.get("isClosed"))
    probability = parse_probability(fields.get("probability"))
    if won is True:
        return True, True, probability
    if closed is not None:
        return closed, bool(closed and (won or probability == 1)), probability
    if won is False and probability is None:
        return None  # not won says nothing of open or lost
    if probability is None:
        return None
    if probability >= 1:
        return True, True, probability
    return probability <= 0, False, probability


def _parsers(table: Table, date_order: str) -> dict:
    """The file's own way of writing amounts and dates, settled by its values."""
    if not table.written:
        return {"updatedAt": parse_datetime, "amountCompany": parse_amount}
    rows = table.rows
    # Distinct values only: a file repeats its dates and many of its amounts.
    # Text only: a typed spreadsheet cell (a number, a date) settles nothing.
    separator = decimal_separator_of(
        {f[key] for _, f, _ in rows for key in _AMOUNT_KEYS if f.get(key).__class__ is str}
    )
    order = date_order_of(
        {f[key] for _, f, _ in rows for key in _DATE_KEYS if f.get(key).__class__ is str},
        date_order,
    )
    amount = partial(parse_written_amount, decimal_separator=separator)
    moment = partial(parse_written_datetime, order=order)
    return {
        "amount": amount,
        "amountCompany": amount,
        "closeDate": partial(parse_written_date, order=order),
        "updatedAt": moment,
        "enrichedAt": moment,
    }


def _company_currency(table: Table, parsers: dict) -> str | None:
    """The account's company currency: the deal currency whose deals all have an
    amount equal to their amount in company currency (HubSpot converts the others).
    With no company-currency column, the one currency every deal names, if any."""
    agree: dict[str, int] = defaultdict(int)
    differ: set[str] = set()
    named: set[str] = set()
    for _, fields, _ in table.rows:
        code = _deal_currency(fields)
        if not code:
            continue
        named.add(code)
        if "amountCompany" not in fields or "amount" not in fields:
            continue
        amount = parsers.get("amount", parse_amount)(fields["amount"])
        home = parsers["amountCompany"](fields["amountCompany"])
        if isinstance(amount, Decimal) and isinstance(home, Decimal):
            if amount == home:
                agree[code] += 1
            else:
                differ.add(code)
    candidates = {code: n for code, n in agree.items() if code not in differ}
    if candidates:
        return max(sorted(candidates), key=candidates.__getitem__)
    return named.pop() if len(named) == 1 else None


def _deal_currency(fields: dict) -> str | None:
    code = parse_currency(fields.get("currency"))
    if isinstance(code, str):
        return code
    return currency_in_amount(fields.get("amount"))


def _money(fields: dict, extra: dict, company_currency: str | None) -> None:
    """Money at risk is the amount in company currency when the export has it, so
    deals in several currencies add up; the deal's own amount and currency stay in
    extra. Otherwise the amount is in the deal's currency (a column, or its symbol)."""
    home = fields.pop("amountCompany", None)
    if home not in (None, ""):
        if "amount" in fields:
            extra.setdefault("amount in deal currency", fields["amount"])
        if "currency" in fields:
            extra.setdefault("deal currency", fields.pop("currency"))
        fields["amount"] = home
        if company_currency:
            fields["currency"] = company_currency
        return
    if "currency" not in fields:
        code = currency_in_amount(fields.get("amount"))
        if code:
            fields["currency"] = code


def _domain_from_website(fields: dict, extra: dict) -> None:
    website = fields.pop("website", None)
    if website is None:
        return
    if "domain" in fields:
        extra.setdefault("website", website)
    else:
        fields["domain"] = website  # normalize.domain strips the scheme and path


def _associations(fields: dict) -> None:
    """companyIds keeps every associated company; companyId is the primary one (from
    the (Primary) column), else the first listed. Contact ids: every one."""
    listed = fields.get("companyIds")
    if listed.__class__ is str:
        listed = fields["companyIds"] = _ids(listed)
    primary = fields.get("companyId")
    if primary.__class__ is str:
        ids = _ids(primary)
        fields["companyId"] = ids[0] if ids else None
    if not fields.get("companyId") and listed:
        fields["companyId"] = listed[0]
    contacts = fields.get("contactIds")
    if contacts.__class__ is str:
        fields["contactIds"] = _ids(contacts)


def _ids(cell: str) -> list[str]:
    return [part.strip() for part in cell.split(ID_SEPARATOR) if part.strip()]


def _resolve_names(by_name: list[tuple[Record, str]], companies: list[Company]) -> dict:
    """An association column that holds a company's name (`Associated Company`) names
    the one company with that exact normalised name; the cell may also hold its id.
    A name with no such company, or several, stays unresolved, reported once per name."""
    if not by_name:
        return {}
    ids = {c.id for c in companies}
    named: dict[str, list[str]] = defaultdict(list)
    for company in companies:
        key = normalize.company_name(company.name)
        if key:
            named[key].append(company.id)
    unresolved: dict[str, dict] = {}
    for record, name in by_name:
        text = name.strip() if name.__class__ is str else ""
        if not text:
            continue
        if text in ids:
            record.company_id = text
            continue
        matches = named.get(normalize.company_name(text) or "", [])
        if len(matches) == 1:
            record.company_id = matches[0]
            continue
        entry = unresolved.setdefault(text, {"records": [], "candidates": sorted(matches)})
        entry["records"].append(record.id)
    return unresolved
