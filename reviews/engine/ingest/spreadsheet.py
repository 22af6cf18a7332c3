"""Exports saved as XLSX or XLS, read like CSV (docs/input.md, "Spreadsheets"): HubSpot's,
and Salesforce's reports (salesforce/reader.py passes its own `columns`).

python-calamine reads both (it never evaluates a formula: a formula cell gives the
value Excel cached). Each file is first
checked by workbook_guard, so a hostile one never reaches it.

Then a workbook's one sheet whose header row is an export's is read; several sheets
that each look like an export are refused. Cells come typed: numbers and dates in
amount and date columns are taken as typed; every other cell becomes the text CSV
would hold, so the same value readers apply."""

from __future__ import annotations

import io
import posixpath
import zipfile
from collections.abc import Callable, Iterator
from datetime import date, datetime, time, timedelta
from decimal import Decimal

from python_calamine import CalamineError, CalamineWorkbook, SheetTypeEnum

from reviews.engine.ingest.columns import kind_of, map_headers
from reviews.engine.ingest.errors import ErrorList, Limits
from reviews.engine.ingest.workbook_guard import (
    XLS,
    XLSX,
    check_xls,
    check_xlsx,
    may_hold_unsafe_text,
    short,
)

__all__ = ["may_hold_unsafe_text", "sheet_rows", "spreadsheet_kind"]

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
MAX_SHEETS = 100

# A header row -> {column position: the field it fills}, or None: not this CRM's export.
Columns = Callable[[list[str]], dict[int, str] | None]

_TYPED_AMOUNT = frozenset({"amount", "amountCompany"})
_TYPED_DATE = frozenset({"closeDate", "updatedAt", "enrichedAt"})
_TYPED_STATE = frozenset({"isClosedWon", "isClosed", "probability"})


def spreadsheet_kind(name: str, data: bytes) -> str | None:
    """xlsx or xls by extension, else by content; None for anything else."""
    extension = posixpath.splitext(name.lower())[1]
    if extension in (".xlsx", ".xlsm"):
        return XLSX
    if extension == ".xls":
        return XLS
    if extension:
        return None
    if data[:8] == OLE_MAGIC:
        return XLS
    if data[:4] == b"PK\x03\x04" and _is_xlsx_package(data):
        return XLSX
    return None


def _is_xlsx_package(data: bytes) -> bool:
    try:
        names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    except (zipfile.BadZipFile, ValueError, EOFError):
        return False
    return "[Content_Types].xml" in names and any(n.startswith("xl/") for n in names)


def hubspot_columns(headers: list[str]) -> dict[int, str] | None:
    """{column position: field} of a HubSpot export's header row; None if it is not one."""
    kind = kind_of(headers)
    return dict(map_headers(kind, headers)[0]) if kind else None


def sheet_rows(
    name: str,
    data: bytes,
    errors: ErrorList,
    limits: Limits,
    columns: Columns = hubspot_columns,
    crm: str = "HubSpot",
) -> tuple[list[str], Iterator[list]] | None:
    """(header row, iterator over the other rows) of the export a workbook holds, or
    None with the reason on `errors`. `columns` tells a `crm`'s export by its header row
    and says which field each column fills (amounts and dates are taken as typed)."""
    # By content, whatever the name says: an XLS saved as .xlsx, an XLSX as .xls.
    kind = XLS if data[:8] == OLE_MAGIC else XLSX
    problem = check_xlsx(data, limits) if kind == XLSX else check_xls(data, limits)
    if problem:
        errors.add(f"{name}: {problem}")
        return None
    try:
        workbook = CalamineWorkbook.from_object(io.BytesIO(data))
        found = _export_sheet(name, workbook, errors, columns, crm)
    except (CalamineError, ValueError, OSError) as error:
        errors.add(f"{name}: not a readable {kind.upper()} file ({short(error)})")
        return None
    return found


def _export_sheet(name: str, workbook, errors: ErrorList, columns: Columns, crm: str):
    sheets = [m for m in workbook.sheets_metadata if m.typ == SheetTypeEnum.WorkSheet]
    if len(sheets) > MAX_SHEETS:
        errors.add(f"{name}: {len(sheets):,} sheets; an export has one (at most {MAX_SHEETS})")
        return None
    exports, others = [], []
    for meta in sheets:
        rows = workbook.get_sheet_by_name(meta.name).iter_rows()
        header = next(rows, None)
        if header is None or not any(_text(c).strip() for c in header):
            continue  # an empty sheet
        headers = [_text(c) for c in header]
        (exports if columns(headers) is not None else others).append((meta.name, headers, rows))
    if len(exports) > 1:
        listed = ", ".join(repr(sheet) for sheet, _, _ in exports[:5])
        errors.add(
            f"{name}: {len(exports)} sheets look like {crm} exports ({listed}); "
            "save each sheet as its own file, or delete all but the export"
        )
        return None
    chosen = exports[0] if exports else (others[0] if others else None)
    if chosen is None:
        errors.add(f"{name}: empty workbook, no header row")
        return None
    _, headers, rows = chosen
    return headers, _converted(headers, rows, columns(headers) or {})


def _converted(headers: list[str], rows: Iterator[list], fields: dict[int, str]) -> Iterator[list]:
    convert = [_converter(fields.get(position)) for position in range(len(headers))]
    width = len(convert)
    for row in rows:
        yield [convert[p](cell) if p < width else _text(cell) for p, cell in enumerate(row)]


def _converter(field: str | None):
    if field in _TYPED_AMOUNT:
        return _amount
    if field in _TYPED_DATE:
        return _moment
    if field in _TYPED_STATE:
        return _state
    return _text


def _amount(cell: object) -> object:
    if cell.__class__ is float:
        return Decimal(repr(cell))  # repr: 0.1 stays 0.1
    return cell  # int, or text for the written-amount reader


_EXCEL_EPOCH = datetime(1899, 12, 30)


def _moment(cell: object) -> object:
    if isinstance(cell, datetime | date):
        return cell
    if cell.__class__ in (int, float) and 1 <= cell < 2958466:  # a date serial, unformatted
        return _EXCEL_EPOCH + timedelta(days=cell)
    return _text(cell)


def _state(cell: object) -> object:
    return cell if cell.__class__ in (bool, int, float) else _text(cell)


def _text(cell: object) -> str:
    """The cell as CSV would hold it."""
    kind = cell.__class__
    if kind is str:
        return cell
    if kind is bool:
        return "true" if cell else "false"
    if kind is int:
        return str(cell)
    if kind is float:
        return str(int(cell)) if cell.is_integer() else repr(cell)
    if isinstance(cell, datetime | date | time):
        return cell.isoformat()
    return "" if cell is None else str(cell)
