"""The checks a workbook passes before python-calamine opens it (spreadsheet.py).

calamine holds a sheet as one dense rectangle spanning its first to its last cell, and
reserves room for as many shared strings (XLSX) or cells (XLS) as the file declares; so
a hostile file (a zip bomb, cells at A1 and XFD1048576, a declared count of a trillion
strings) would take all memory before any row is read. Each file is checked by what it
holds, not by what it says:

- XLSX: the ZIP directory's sizes, then every member inflated in chunks against the
  same budget (MAX_UPLOAD_BYTES), never held whole; XML with a DTD is refused; the
  shared-strings count must fit the part's size; each sheet's cells (their positions)
  give its rectangle, and all rectangles together stay within Limits.max_cells.
- XLS: the workbook stream's size against the file's; its records walked for each
  sheet's declared dimensions and cell positions, against the same cell cap."""

from __future__ import annotations

import io
import re
import struct
import zipfile
import zlib
from functools import lru_cache

import olefile

from reviews.engine.ingest.errors import Limits

XLSX, XLS = "xlsx", "xls"
MAX_MEMBERS = 10_000  # parts of one XLSX package
_CHUNK = 1 << 20


def short(error: Exception) -> str:
    """An error's message, cut to a line."""
    text = str(error).strip() or type(error).__name__
    return text if len(text) <= 200 else text[:199] + "…"


_ESCAPE = re.compile(rb"_x[0-9A-Fa-f]{4}_")


def may_hold_unsafe_text(data: bytes, kind: str) -> bool:
    """Whether a workbook's cells may hold NUL or a lone surrogate (safe_text): an XLSX
    only through an escape (`_x0000_`, `&#xD800;`) in a part that holds cell text (a
    sheet, the shared strings), so one without any is clean; an XLS may hold anything."""
    if kind != XLSX:
        return True
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        for info in archive.infolist():
            name = info.filename.lower()
            if not name.endswith(".xml") or ("sheet" not in name and "string" not in name):
                continue
            with archive.open(info) as member:
                last = b""
                while chunk := member.read(_CHUNK):
                    window = last + chunk
                    if b"&#" in window or (b"_x" in window and _ESCAPE.search(window)):
                        return True
                    last = chunk[-6:]
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, ValueError):
        return True
    except RuntimeError:
        return True
    return False


# --- XLSX: the package checked before calamine opens it -----------------------------


def check_xlsx(data: bytes, limits: Limits) -> str | None:
    """Why this XLSX must not be opened, or None."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
        if len(members) > MAX_MEMBERS:
            return f"holds {len(members):,} parts; not an export"
        declared = sum(info.file_size for info in members)
        if declared > limits.max_bytes:
            return _too_big(f"{declared:,} bytes", limits)
        budget = limits.max_bytes
        cells = 0
        for info in members:
            if info.is_dir():
                continue
            used, spanned, problem = _check_member(archive, info, budget, limits)
            if problem:
                return problem
            budget -= used
            cells += spanned
            if cells > limits.max_cells:
                return _too_many_cells(cells, limits)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, ValueError) as error:
        return f"not a readable XLSX file ({short(error)})"
    except RuntimeError as error:  # an encrypted part
        return f"not a readable XLSX file ({short(error)})"
    return None


def _check_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: int, limits: Limits
) -> tuple[int, int, str | None]:
    """(bytes it inflates to, cells its sheet spans, problem)."""
    is_xml = info.filename.lower().endswith((".xml", ".rels", ".vml"))
    scan = _SheetScan() if is_xml else None
    used = 0
    head = b""
    with archive.open(info) as member:
        while True:
            chunk = member.read(min(_CHUNK, budget - used + 1))
            if not chunk:
                break
            used += len(chunk)
            if used > budget:
                return used, 0, _too_big("more bytes than it declares", limits)
            if scan is not None:
                if len(head) < 4096:
                    head += chunk[: 4096 - len(head)]
                    if b"<!DOCTYPE" in head or b"<!ENTITY" in head:
                        return used, 0, f"{info.filename} declares a DTD; not an export"
                scan.feed(chunk)
    if info.filename.lower().endswith("sharedstrings.xml"):
        declared = _unique_count(head)
        if declared is not None and declared > used // 5 + 16:  # "<si/>" is 5 bytes
            return (
                used,
                0,
                (
                    f"{info.filename} declares {declared:,} strings, more than its "
                    f"{used:,} bytes can hold"
                ),
            )
    return used, scan.cells() if scan else 0, None


_UNIQUE_COUNT = re.compile(rb"<(?:\w+:)?sst\b[^>]*?\suniqueCount\s*=\s*[\"']\s*(\d+)")


def _unique_count(head: bytes) -> int | None:
    found = _UNIQUE_COUNT.search(head)
    return int(found.group(1)[:30]) if found else None


_TAG = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?(row|c)(?=[\s/>])([^>]*)>")
_REF = re.compile(rb"\sr\s*=\s*[\"']\s*([A-Za-z]*)\s*(\d*)")
# The common case: every cell tag opens with its reference, `<c r="B7"`, as Excel,
# HubSpot and the libraries write it; found and counted in C. Any other shape (a cell
# without `r`, `r` not first, a namespace prefix) takes the exact path, a tag at a time.
_CELL_REF = re.compile(rb'<c r="([A-Z]{1,3})([0-9]{1,7})"')
_CELL_OPEN = re.compile(rb"<c[\s/>]")
_PREFIXED_CELL = re.compile(rb":c[\s/>]")


class _SheetScan:
    """The rectangle a sheet's cells span, as calamine places them: a cell's `r`
    reference, else the next column of its row; a row's `r`, else the next row."""

    def __init__(self) -> None:
        self.tail = b""
        self.row = 0
        self.col = 0
        self.count = 0
        self.top = self.left = 1 << 62
        self.bottom = self.right = -1

    def feed(self, chunk: bytes) -> None:
        text = self.tail + chunk
        cut = text.rfind(b"<")
        if cut < 0 or text.find(b">", cut) >= 0:
            body, self.tail = text, b""
        else:
            body, self.tail = text[:cut], text[cut:]
        if len(self.tail) > _CHUNK:  # a tag a megabyte long: no sheet writes one
            self.tail = b""
        if not self._fast(body):
            self._slow(body)

    def _fast(self, body: bytes) -> bool:
        """The chunk's cells when each opens with its reference; False: take _slow."""
        if _PREFIXED_CELL.search(body):
            return False
        refs = _CELL_REF.findall(body)
        if len(refs) != len(_CELL_OPEN.findall(body)):
            return False
        if not refs:
            return b"<row" not in body  # rows only: their numbers matter to the next cell
        letters, row = refs[-1]
        if b"<row" in body[body.rfind(b'<c r="' + letters + row + b'"') :]:
            return False  # a row opened after the last cell: _slow keeps its number
        all_letters, all_rows = zip(*refs, strict=True)  # in C; then only distinct values
        rows = [int(number) for number in set(all_rows)]
        columns = [_column(name) for name in set(all_letters)]
        self.count += len(refs)
        self.top = min(self.top, min(rows))
        self.bottom = max(self.bottom, max(rows))
        self.left = min(self.left, min(columns))
        self.right = max(self.right, max(columns))
        self.row, self.col = int(row), _column(letters)
        return True

    def _slow(self, body: bytes) -> None:
        for found in _TAG.finditer(body):
            ref = _REF.search(found.group(2))
            if found.group(1) == b"row":
                self.row = int(ref.group(2)[:12]) if ref and ref.group(2) else self.row + 1
                self.col = 0
                continue
            if ref and ref.group(1):
                self.col = _column(ref.group(1)[:12].upper())
                if ref.group(2):
                    self.row = int(ref.group(2)[:12])
            else:
                self.col += 1
            self.count += 1
            self.top = min(self.top, self.row)
            self.bottom = max(self.bottom, self.row)
            self.left = min(self.left, self.col)
            self.right = max(self.right, self.col)

    def cells(self) -> int:
        if not self.count:
            return 0
        return (self.bottom - self.top + 1) * (self.right - self.left + 1)


@lru_cache(maxsize=4096)
def _column(letters: bytes) -> int:
    number = 0
    for letter in letters:
        number = number * 26 + letter - 64
    return number


# --- XLS: the workbook stream checked before calamine opens it ----------------------

_CELL_RECORDS = frozenset({0x0203, 0x0204, 0x00D6, 0x0205, 0x027E, 0x00FD, 0x0006, 0x0201})
_MULTI_RECORDS = frozenset({0x00BD, 0x00BE})  # MulRk, MulBlank: row, first col, ..., last col
_BOF, _EOF, _DIMENSIONS = 0x0809, 0x000A, 0x0200


def check_xls(data: bytes, limits: Limits) -> str | None:
    """Why this XLS must not be opened, or None."""
    try:
        with olefile.OleFileIO(io.BytesIO(data)) as ole:
            stream_name = next((n for n in ("Workbook", "Book") if ole.exists(n)), None)
            if ole.exists("EncryptedPackage"):
                return "a password-protected workbook: save it again without a password"
            if stream_name is None:
                return "not a readable XLS file (no workbook stream)"
            size = ole.get_size(stream_name)
            if size > len(data):
                return "not a readable XLS file (its workbook stream is larger than the file)"
            stream = ole.openstream(stream_name).read()
    except (OSError, ValueError, struct.error, IndexError, KeyError, TypeError) as error:
        return f"not a readable XLS file ({short(error)})"
    return _check_records(stream, limits)


def _check_records(stream: bytes, limits: Limits) -> str | None:
    total = 0
    box: list[int] | None = None  # top, bottom, left, right of the sheet being read
    position, end = 0, len(stream) - 4
    unpack = struct.unpack_from
    while position <= end:
        typ, length = unpack("<HH", stream, position)
        body = position + 4
        position = body + length
        if typ == _BOF:
            box = [1 << 40, -1, 1 << 40, -1]
            continue
        if typ == _EOF:
            if box is not None and box[1] >= 0:
                total += (box[1] - box[0] + 1) * (box[3] - box[2] + 1)
            box = None
            if total > limits.max_cells:
                return _too_many_cells(total, limits)
            continue
        if box is None or position > len(stream):
            continue
        if typ == _DIMENSIONS:
            reserved = _dimensions(stream[body:position])
            if reserved > limits.max_cells:
                return _too_many_cells(reserved, limits)
        elif typ in _CELL_RECORDS and length >= 4:
            row, col = unpack("<HH", stream, body)
            _grow(box, row, col, col)
        elif typ in _MULTI_RECORDS and length >= 6:
            row, first = unpack("<HH", stream, body)
            (last,) = unpack("<H", stream, position - 2)
            _grow(box, row, min(first, last), max(first, last))
    if box is not None and box[1] >= 0:
        total += (box[1] - box[0] + 1) * (box[3] - box[2] + 1)
    return _too_many_cells(total, limits) if total > limits.max_cells else None


def _grow(box: list[int], row: int, left: int, right: int) -> None:
    if row < box[0]:
        box[0] = row
    if row > box[1]:
        box[1] = row
    if left < box[2]:
        box[2] = left
    if right > box[3]:
        box[3] = right


def _dimensions(record: bytes) -> int:
    """The cells calamine reserves room for on a DIMENSIONS record (its arithmetic,
    wrap-around included)."""
    if len(record) == 14:
        first_row, last_row, first_col, last_col = struct.unpack_from("<IIHH", record)
    elif len(record) == 10:
        first_row, last_row, first_col, last_col = struct.unpack_from("<HHHH", record)
    else:
        return 0
    if first_col > 0xFF or last_col < first_col:
        first_col = 0
    if last_row < 1 or last_col < 1:
        return 1
    rows = (last_row - 1 - first_row + 1) % (1 << 32)
    cols = (last_col - 1 - first_col + 1) % (1 << 32)
    return rows * cols


def _too_big(size: str, limits: Limits) -> str:
    return f"unpacks to {size}; the limit is {limits.max_bytes:,} bytes (MAX_UPLOAD_BYTES)"


def _too_many_cells(cells: int, limits: Limits) -> str:
    return (
        f"its sheets span {cells:,} cells; the limit is {limits.max_cells:,} "
        "(SPREADSHEET_MAX_CELLS): save the export as CSV, or export fewer columns"
    )
