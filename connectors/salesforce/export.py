"""What a Salesforce pull stores: one CSV per object in Data Loader's shape, the shape the
Salesforce export reader (reviews/engine/ingest/salesforce/) reads. No Django.

A file is named after its object (Account.csv, ...); its header row holds the API field
names, every field the integration user can read (from the object's describe) but the
compound ones (an address, a geolocation: their parts are fields of their own) and the
binary ones. UTF-8, RFC 4180 quoting (csv's default, CRLF line ends), rows in Id order.
Values are written as the REST API gives them: dates YYYY-MM-DD, datetimes
2026-05-02T10:11:00.000+0000, booleans true/false, numbers as sent (never through a
float), blank for null. Lone surrogates become U+FFFD: the files are valid UTF-8."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from decimal import Decimal
from urllib.parse import quote_plus

# The objects pulled, in the order they are pulled, and the fields each must have: a
# describe without one of these means the integration user cannot read it (field-level
# security), and the pull says so rather than storing a file the review misreads.
REQUIRED: dict[str, tuple[str, ...]] = {
    "User": ("Id", "Name", "IsActive"),
    "OpportunityStage": (
        "Id",
        "ApiName",
        "MasterLabel",
        "IsClosed",
        "IsWon",
        "DefaultProbability",
        "IsActive",
    ),
    "Account": ("Id", "Name", "OwnerId", "IsDeleted", "Website", "AccountSource"),
    "Contact": (
        "Id",
        "OwnerId",
        "IsDeleted",
        "AccountId",
        "Email",
        "FirstName",
        "LastName",
        "LeadSource",
    ),
    "Opportunity": (
        "Id",
        "Name",
        "OwnerId",
        "IsDeleted",
        "AccountId",
        "Amount",
        "StageName",
        "CloseDate",
        "IsClosed",
        "IsWon",
        "Probability",
    ),
    "Lead": (
        "Id",
        "OwnerId",
        "IsDeleted",
        "Email",
        "Company",
        "LeadSource",
        "Status",
        "IsConverted",
    ),
    "OpportunityContactRole": ("Id", "OpportunityId", "ContactId", "IsPrimary", "Role"),
}
OBJECTS = tuple(REQUIRED)
# Kept first in each file, in this order, where the object has them.
LEADING = (
    "Id",
    "Name",
    "OwnerId",
    "IsDeleted",
    "MasterRecordId",
    "SystemModstamp",
    "LastModifiedDate",
    "CurrencyIsoCode",
)
MODSTAMP = "SystemModstamp"
# The most bytes of a query's URL-encoded text: Salesforce refuses a URI and headers over
# 16,384 bytes (414, 431). An object with more fields than fit is queried in groups of
# fields, each with Id, and its rows joined by Id.
QUERY_BUDGET = 12_000
_SOQL_ESCAPES = str.maketrans(
    {"\\": "\\\\", "'": "\\'", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
)
_SKIPPED_TYPES = {"address", "location", "base64"}


class ExportProblem(ValueError):
    """An object cannot be exported as the review needs it: the message names it."""


def file_name(sobject: str) -> str:
    return f"{sobject}.csv"


def fields_of(sobject: str, describe: dict) -> list[str]:
    """The fields to query, from the object's describe: the leading ones first, then the
    rest in the describe's order. Raises ExportProblem naming a required field missing."""
    names = [
        str(f["name"])
        for f in describe.get("fields") or []
        if isinstance(f, dict) and f.get("name") and f.get("type") not in _SKIPPED_TYPES
    ]
    missing = [name for name in REQUIRED[sobject] if name not in names]
    if missing:
        raise ExportProblem(
            f"{sobject}: the integration user cannot read {', '.join(missing)} (not in "
            f"the {sobject} describe): give its profile or permission set read access"
        )
    leading = [name for name in LEADING if name in names]
    return leading + [name for name in names if name not in leading]


def soql(sobject: str, fields: list[str], *, since: str = "", after_id: str = "") -> str:
    """SELECT the fields, in Id order; `since`: modified after it (SystemModstamp, a
    SOQL datetime literal); `after_id`: past the last record kept (a resumed pull)."""
    where = []
    if since:
        where.append(f"{MODSTAMP} > {since}")
    if after_id:
        where.append(f"Id > '{soql_text(after_id)}'")
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    # SOQL, not SQL: the names are the describe's, the one value an Id, quoted.
    return f"SELECT {', '.join(fields)} FROM {sobject}{clause} ORDER BY Id"  # noqa: S608


def field_groups(sobject: str, fields: list[str], budget: int | None = None) -> list[list[str]]:
    """`fields` in groups whose query (with both conditions, at their longest) fits in
    `budget` bytes once URL-encoded; each group starts with Id. Usually one group."""
    budget = budget or QUERY_BUDGET
    groups: list[list[str]] = [["Id"]]
    for name in fields:
        if name == "Id":
            continue
        trial = [*groups[-1], name]
        if _encoded_length(sobject, trial) > budget and len(groups[-1]) > 1:
            groups.append(["Id", name])
        else:
            groups[-1] = trial
    return groups


def _encoded_length(sobject: str, fields: list[str]) -> int:
    longest = soql(sobject, fields, since="2026-01-01T00:00:00Z", after_id="0" * 18)
    return len(quote_plus(longest))


def row_of(record: dict, fields: list[str]) -> list[str]:
    """A REST record's values as the CSV's cells, in `fields` order."""
    return [cell(record.get(name)) for name in fields]


def cell(value: object) -> str:
    if value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, Decimal)):
        return str(value)
    if isinstance(value, str):
        return _valid_text(value)
    # A relationship or another nested value: not queried, but never a crash.
    return _valid_text(str(value))


def write_csv(fields: list[str], rows: Iterable[list[str]]) -> bytes:
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(fields)
    writer.writerows(sorted(rows, key=lambda row: row[0]))
    return out.getvalue().encode("utf-8")


def read_csv(data: bytes) -> tuple[list[str], dict[str, dict[str, str]]]:
    """A stored file as (its header, its rows by Id): what an incremental pull builds on."""
    reader = csv.reader(io.StringIO(data.decode("utf-8"), newline=""))
    header = next(reader, [])
    rows = {}
    for values in reader:
        row = dict(zip(header, values, strict=False))
        if row.get("Id"):
            rows[row["Id"]] = row
    return header, rows


def _valid_text(text: str) -> str:
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:  # a lone surrogate: its pair cannot be recovered
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def soql_text(text: str) -> str:
    """`text` for a SOQL string literal, escaped as SOQL escapes."""
    return text.translate(_SOQL_ESCAPES)
