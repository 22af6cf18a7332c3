"""From Salesforce's tables (reader.py) to a Batch: what only the whole export settles.

- Ids are 18 characters everywhere (ids.py), references too.
- Deleted rows (`IsDeleted` true: the recycle bin, which Data Loader's Export All and a
  pull through queryAll include) are not live records and are left out; a row merged
  away (`MasterRecordId` set) is left out too, and a reference to it names its master.
- `OwnerId` is the owner's name through User.csv (else the id stays); a lead's owner is
  active or not by `User.IsActive` (a report names owners: the Users report, by name).
- The stages are the org's OpportunityStage definitions when the upload has them (one
  pipeline: Salesforce has no pipelines, sales processes share one stage list); else
  each stage's state is read off its opportunities' IsClosed / IsWon / Probability.
- A deal's contacts are its OpportunityContactRole rows, the primary one first."""

from __future__ import annotations

from datetime import datetime
from functools import partial

from reviews.engine.batch import Batch, Pipeline, Stage, ValueProblem
from reviews.engine.ingest.hubspot_records import Table, observe_stages
from reviews.engine.ingest.records import Record, build_record, field_parsers
from reviews.engine.ingest.salesforce.fields import (
    CONTACT_ROLE,
    FILLED_ELSEWHERE,
    OPPORTUNITY,
    ORGANIZATION,
    STAGE,
    USER,
    record_keys,
)
from reviews.engine.ingest.salesforce.ids import to18
from reviews.engine.ingest.salesforce.reader import SfTable
from reviews.engine.ingest.values import (
    describe,
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

STAGE_PIPELINE = "default"  # the one stage list of an org (batch.DEFAULT_PIPELINE_ID)
_REFERENCES = ("companyId",)  # fields that hold another record's id
_MAX_CHAIN = 20  # merges followed from a merged-away id to its master


def assemble_salesforce(
    tables: dict[str, SfTable], *, as_of: datetime | None, received_at: datetime, date_order: str
) -> Batch:
    """The batch of one org's tables, keyed by object name (Account, Lead...)."""
    users = _users(tables.get(USER.name))
    master = _merged(tables)
    roles = _roles(tables.get(CONTACT_ROLE.name), master)
    problems: list[ValueProblem] = []
    lists: dict[str, list[Record]] = {"companies": [], "contacts": [], "deals": [], "leads": []}
    exported: dict[str, frozenset[str]] = {}
    headers: dict[str, dict[str, str]] = {}
    newest: datetime | None = None
    for table in tables.values():
        kind = table.sf_object.kind
        if kind is None:
            continue
        parsers = _written_parsers(table, date_order) if table.report else {}
        plan = field_parsers(kind, parsers)
        stamp_of = parsers.get("updatedAt", parse_datetime)
        fills = record_keys(table.sf_object)
        out = lists[kind.name]
        column = {key: header for header, key in table.headers.items()}
        for row, rid, values, extra in table.rows:
            if rid in master or parse_flag(values.get("isDeleted")):
                continue  # merged away or in the recycle bin: not a live record
            fields = {k: v for k, v in values.items() if k in fills}
            found = len(problems)
            _references(fields, master, rid, f"{kind.name}[{len(out)}]", problems)
            _owner(fields, users, table)
            if kind.name == "deals":
                _deal(fields, roles, rid, table)
            # Every object's LastModifiedDate counts, a field of its records or not.
            stamp = stamp_of(values["updatedAt"]) if "updatedAt" in values else None
            if stamp.__class__ is datetime and (newest is None or stamp > newest):
                newest = stamp
            record = build_record(kind, rid, len(out), fields, extra, problems, plan)
            for problem in problems[found:]:  # named as the file has them (row, header)
                problem.place = f"{table.name} row {row}"
                key = problem.path.rsplit(".", 1)[-1]
                problem.column = column.get(key, key)
            out.append(record)
        exported[kind.name] = _exported(table, tables)
        headers[kind.name] = table.headers
    if as_of:
        as_of_source = "given"
    elif newest:
        as_of, as_of_source = newest, "last_modified"
    else:
        as_of, as_of_source = received_at, "upload"
    pipelines = _pipelines(tables.get(STAGE.name))
    report = any(t.report for t in tables.values())
    currency = _org_currency(tables.get(ORGANIZATION.name))
    return Batch(
        id=None,
        as_of=as_of,
        as_of_source=as_of_source,
        source="salesforce-report" if report else "salesforce-export",
        companies=lists["companies"],
        contacts=lists["contacts"],
        deals=lists["deals"],
        leads=lists["leads"],
        pipelines=dict(pipelines),
        uploaded_pipelines=list(pipelines.values()),
        value_problems=problems,
        # Leads too: an org has them, so an export without Lead.csv left them out and
        # the lead rules could not run (docs/rules.md#partial-exports).
        partial=[n for n in ("companies", "contacts", "deals", "leads") if n not in exported],
        ignored_columns={name: kept for name, kept in _kept(tables).items() if kept},
        exported_fields=exported,
        observed_stages=_observed(tables.get(OPPORTUNITY.name)),
        field_headers={name: h for name, h in headers.items() if h},
        currency=currency,
    )


def _org_currency(table: SfTable | None) -> str | None:
    """The org's default currency (Organization.csv's DefaultCurrencyIsoCode), when it is
    an ISO code: a single-currency org's amounts are in it."""
    for _, _, values, _ in table.rows if table is not None else ():
        code = parse_currency(values.get("currency"))
        if code.__class__ is str:
            return code
    return None


def _kept(tables: dict[str, SfTable]) -> dict[str, list[str]]:
    """Each file's headers that nothing reads (kept in its records' `extra`)."""
    return {t.name: t.ignored for t in tables.values()}


def _users(table: SfTable | None) -> dict[str, tuple[str, bool | None]]:
    """User id (and, for a report's owner names, the name) -> (name, active)."""
    users: dict[str, tuple[str, bool | None]] = {}
    if table is None:
        return users
    for _, rid, values, _ in table.rows:
        name = values.get("name") or " ".join(
            part for part in (values.get("firstName"), values.get("lastName")) if part
        )
        active = parse_flag(values.get("isActive"))
        users[rid] = (name.strip() or rid, active)
        if name.strip():
            users.setdefault(name.strip(), (name.strip(), active))
    return users


def _merged(tables: dict[str, SfTable]) -> dict[str, str]:
    """Every merged-away id -> the id of the record it was merged into."""
    master: dict[str, str] = {}
    for table in tables.values():
        for _, rid, values, _ in table.rows:
            target = to18(values.get("masterId", ""))
            if target and target != rid:
                master[rid] = target
    return master


def _follow(record_id: str, master: dict[str, str]) -> str:
    for _ in range(_MAX_CHAIN):
        if record_id not in master:
            break
        record_id = master[record_id]
    return record_id


def _roles(table: SfTable | None, master: dict[str, str]) -> dict[str, list[str]] | None:
    """Opportunity id -> its contacts' ids, the primary contact first; None: no file."""
    if table is None:
        return None
    found: dict[str, list[tuple[bool, str]]] = {}
    for _, _, values, _ in table.rows:
        if parse_flag(values.get("isDeleted")):
            continue
        deal, contact = to18(values.get("opportunityId", "")), to18(values.get("contactId", ""))
        if deal and contact:
            primary = bool(parse_flag(values.get("isPrimary")))
            found.setdefault(_follow(deal, master), []).append(
                (not primary, _follow(contact, master))
            )
    return {
        deal: list(dict.fromkeys(c for _, c in sorted(pairs, key=lambda p: p[0])))
        for deal, pairs in found.items()
    }


def _references(
    fields: dict, master: dict[str, str], rid: str, where: str, problems: list[ValueProblem]
) -> None:
    for key in _REFERENCES:
        value = fields.get(key)
        if value is None or not value.strip():
            continue
        target = to18(value)
        if target is None:
            del fields[key]
            message = f"not a Salesforce id (15 or 18 letters and digits): {describe(value)}"
            problems.append(ValueProblem("attribution", rid, f"{where}.{key}", message))
        else:
            fields[key] = _follow(target, master)


def _owner(fields: dict, users: dict[str, tuple[str, bool | None]], table: SfTable) -> None:
    """OwnerId as the owner's name; a lead's owner active or not, when User.csv says."""
    owner = fields.get("owner")
    if not owner or not users:
        return
    key = owner.strip() if table.report else (to18(owner) or owner.strip())
    user = users.get(key)
    if user is None:
        return  # a queue (00G...), or a user the file does not list
    fields["owner"] = user[0]
    if table.sf_object.kind is not None and table.sf_object.kind.name == "leads":
        if user[1] is not None:
            fields["ownerActive"] = user[1]


def _deal(fields: dict, roles: dict[str, list[str]] | None, rid: str, table: SfTable) -> None:
    if roles is not None and roles.get(rid):
        fields["contactIds"] = roles[rid]
    if table.report and "currency" not in fields:
        code = currency_in_amount(fields.get("amount"))  # "EUR 12,000.00"
        if code:
            fields["currency"] = code


def _exported(table: SfTable, tables: dict[str, SfTable]) -> frozenset[str]:
    """The batch fields this file had a column for (blank or not), and those another
    file fills: a deal's contacts (contact roles), a lead owner's activity (users)."""
    keys = set(table.keys & record_keys(table.sf_object)) - {"id"}
    name = table.sf_object.kind.name if table.sf_object.kind else ""
    if name in FILLED_ELSEWHERE:
        key, other = FILLED_ELSEWHERE[name]
        if other.name in tables and (name != "leads" or "owner" in keys):
            keys.add(key)
    return frozenset(keys)


def _written_parsers(table: SfTable, date_order: str) -> dict:
    """A report's own way of writing amounts and dates, settled by its values."""
    # Text only: a typed spreadsheet cell (a number, a date) settles nothing.
    amounts = {v["amount"] for _, _, v, _ in table.rows if v.get("amount").__class__ is str}
    dates = {
        v[k]
        for _, _, v, _ in table.rows
        for k in ("closeDate", "updatedAt")
        if v.get(k).__class__ is str
    }
    order = date_order_of(dates, date_order)
    return {
        "amount": partial(parse_written_amount, decimal_separator=decimal_separator_of(amounts)),
        "closeDate": partial(parse_written_date, order=order),
        "updatedAt": partial(parse_written_datetime, order=order),
    }


def _pipelines(table: SfTable | None) -> dict[str, Pipeline]:
    """The org's stages (OpportunityStage), in their sort order, as one pipeline."""
    if table is None or not table.rows:
        return {}
    ordered = sorted(table.rows, key=lambda row: _sort_order(row[2].get("sortOrder")))
    stages = [
        Stage(
            id=(values.get("apiName") or values.get("label") or rid).strip(),
            label=(values.get("label") or "").strip(),
            closed=bool(parse_flag(values.get("isClosed"))),
            won=bool(parse_flag(values.get("isWon"))),
            probability=parse_probability(values.get("probability")),
        )
        for _, rid, values, _ in ordered
    ]
    return {STAGE_PIPELINE: Pipeline(STAGE_PIPELINE, stages, label="Opportunity stages")}


def _sort_order(value: str | None) -> int:
    text = (value or "").strip()
    return int(text) if text.isdigit() and len(text) < 10 else 1 << 31


def _observed(table: SfTable | None) -> dict[tuple[str, str], Stage]:
    """Each stage's state as its opportunities' IsClosed / IsWon / Probability say."""
    if table is None:
        return {}
    rows = []
    for _, rid, values, _ in table.rows:
        state = {"stage": values.get("stage"), "isClosedWon": values.get("isWon")}
        for key in ("isClosed", "probability"):
            if key in values:
                state[key] = values[key]
        rows.append((rid, state, {}))
    return observe_stages(Table(name=table.name, kind="deals", rows=rows))
