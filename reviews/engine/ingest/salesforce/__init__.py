"""Salesforce's exports (docs/input.md#salesforce-exports): the weekly Data Export's ZIP
or its CSV files, Data Loader's CSV files (both with API field names, one file per
object named after it), and report exports (labels). Recognised by their file names
or headers (fields.py); read into tables (reader.py) and then one Batch (assemble.py)
with the same records, rules and findings as a HubSpot batch, leads besides."""

from __future__ import annotations

from datetime import datetime

from reviews.engine.batch import Batch
from reviews.engine.ingest.errors import ErrorList, IngestError, Limits
from reviews.engine.ingest.salesforce.assemble import assemble_salesforce
from reviews.engine.ingest.salesforce.fields import named_like_object, object_of
from reviews.engine.ingest.salesforce.reader import (
    SfTable,
    header_row,
    is_salesforce_file,
    read_table,
)

__all__ = ["NOT_READ", "is_salesforce_upload", "parse_salesforce"]

# What batch.ignored_columns says of a file of an object no rule reads (Task.csv).
NOT_READ = ["(a file of an object revreview does not read)"]
# What the run says of a file neither named for an object nor headed like one.
UNREAD = (
    "{name} was not read: neither its name nor its columns say it holds Salesforce "
    "Accounts, Contacts, Opportunities, Leads, contact roles, Users or stages"
)


def is_salesforce_upload(files: list[tuple[str, bytes]], limits: Limits | None = None) -> bool:
    """Whether any CSV or spreadsheet file of the upload is one Salesforce wrote."""
    return any(is_salesforce_file(name, data, limits) for name, data in files)


def parse_salesforce(
    files: list[tuple[str, bytes]], *, as_of: datetime | None, received_at: datetime, limits: Limits
) -> Batch:
    """The batch an org's files hold. Files of objects no rule reads (the Data Export's
    Task.csv, Campaign.csv...) are listed as not read."""
    errors = ErrorList(limits.max_errors)
    tables: dict[str, SfTable] = {}
    not_read: dict[str, list[str]] = {}
    warnings: list[dict[str, str]] = []
    for name, data in files:
        headers = header_row(name, data, limits.encoding, limits) or []
        if object_of(name, headers)[0] is None:  # the Data Export's Task.csv, Case.csv...
            not_read[name] = NOT_READ
            if not named_like_object(name):  # extract.csv: never dropped silently
                warnings.append({"code": "unread_file", "message": UNREAD.format(name=name)})
            continue
        table = read_table(name, data, errors, limits.encoding, limits)
        if table is None:
            continue
        key = table.sf_object.name
        if key in tables:
            errors.add(f"{name}: a second {key} file (the first is {tables[key].name})")
            continue
        tables[key] = table
    errors.raise_if_any()
    if not any(t.sf_object.kind is not None for t in tables.values()):
        raise IngestError(
            ["the upload holds no Salesforce Account, Contact, Opportunity or Lead file"]
        )
    batch = assemble_salesforce(
        tables, as_of=as_of, received_at=received_at, date_order=limits.date_order
    )
    batch.ignored_columns.update(not_read)
    batch.warnings = warnings
    return batch
