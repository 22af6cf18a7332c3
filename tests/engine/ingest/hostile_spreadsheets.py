"""Hostile XLSX and XLS files for the fuzz tests: each a real export with one part
replaced or patched, so only the attack differs from a file that reads."""

from __future__ import annotations

import io
import zipfile

from tests.engine.ingest import renewals_portal as portal

SHEET = "xl/worksheets/sheet1.xml"


def deals_xlsx() -> bytes:
    return portal.xlsx_files()[2][1]


def replaced(data: bytes, parts: dict[str, bytes], *, level: int = 9) -> bytes:
    """The package with `parts` replaced or added."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as target:
        for info in source.infolist():
            if info.filename not in parts:
                target.writestr(info.filename, source.read(info.filename))
        for name, body in parts.items():
            target.writestr(name, body)
    return out.getvalue()


def sheet_xml(rows: str, head: str = "") -> bytes:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>{head}<worksheet xmlns='
        f'"http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>{rows}'
        "</sheetData></worksheet>"
    ).encode()


HEADER_ROW = (
    '<row r="1"><c r="A1" t="inlineStr"><is><t>Record ID</t></is></c>'
    '<c r="B1" t="inlineStr"><is><t>Deal Name</t></is></c>'
    '<c r="C1" t="inlineStr"><is><t>Amount</t></is></c></row>'
)


def zip_bomb(inflated: int) -> bytes:
    """A sheet of `inflated` bytes of blank space: a few kilobytes compressed."""
    return replaced(deals_xlsx(), {SHEET: sheet_xml(HEADER_ROW + " " * inflated)})


def sparse_cells() -> bytes:
    """Two cells, at A1 and XFD1048576: a 17-billion-cell rectangle."""
    return replaced(
        deals_xlsx(),
        {SHEET: sheet_xml(HEADER_ROW + '<row r="1048576"><c r="XFD1048576"><v>1</v></c></row>')},
    )


def huge_shared_strings() -> bytes:
    """A shared-strings part declaring a trillion strings in 200 bytes."""
    sst = (
        b'<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/'
        b'spreadsheetml/2006/main" count="999999999999" uniqueCount="999999999999">'
        b"<si><t>x</t></si></sst>"
    )
    return replaced(deals_xlsx(), {"xl/sharedStrings.xml": sst})


def entity_bomb() -> bytes:
    head = (
        '<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;">'
        '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;">]>'
    )
    return replaced(deals_xlsx(), {SHEET: sheet_xml(HEADER_ROW, head=head)})


def formula_amount() -> bytes:
    """A deal whose amount is a formula calling out to the web, with a cached value."""
    row = (
        '<row r="2"><c r="A2"><v>40001</v></c><c r="B2" t="inlineStr"><is><t>Deal</t></is>'
        '</c><c r="C2"><f>WEBSERVICE("http://127.0.0.1:9/x")*0+1200</f><v>1200</v></c></row>'
    )
    return replaced(deals_xlsx(), {SHEET: sheet_xml(HEADER_ROW + row)})


def broken_xml() -> bytes:
    return replaced(deals_xlsx(), {SHEET: sheet_xml(HEADER_ROW)[:-40] + b'<row r="2"><c'})


def lying_sizes() -> bytes:
    """The central directory says the sheet is 100 bytes; it inflates to 20 MB."""
    data = bytearray(zip_bomb(20_000_000))
    directory = data.rfind(b"PK\x01\x02" + b"\x14\x00", 0)  # not needed: patch by name
    del directory
    name = SHEET.encode()
    at = data.find(b"PK\x01\x02")
    while at >= 0:
        length = int.from_bytes(data[at + 28 : at + 30], "little")
        if bytes(data[at + 46 : at + 46 + length]) == name:
            data[at + 24 : at + 28] = (100).to_bytes(4, "little")  # uncompressed size
        at = data.find(b"PK\x01\x02", at + 4)
    return bytes(data)


def two_export_sheets() -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    for title in ("deals", "deals (copy)"):
        sheet = book.create_sheet(title)
        sheet.append(["Record ID", "Deal Name", "Amount"])
        sheet.append([40001, "Deal", 1200])
    del book["Sheet"]
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def export_and_notes_sheets() -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    notes = book.active
    notes.title = "Notes"
    notes.append(["Exported for the Q3 review"])
    sheet = book.create_sheet("deals")
    sheet.append(["Record ID", "Deal Name", "Deal Stage", "Amount"])
    sheet.append([40001, "Deal", "Closed Won", 1200])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def many_sheets(count: int) -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    for index in range(count):
        book.create_sheet(f"s{index}").append(["x"])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def xls_sparse() -> bytes:
    """XLS cells at A1 and IV65536: a 16.7-million-cell rectangle."""
    import xlwt

    book = xlwt.Workbook()
    sheet = book.add_sheet("deals")
    for column, header in enumerate(("Record ID", "Deal Name", "Amount")):
        sheet.write(0, column, header)
    sheet.write(65535, 255, 1)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def xls_huge_dimensions() -> bytes:
    """A DIMENSIONS record declaring 4 billion rows (calamine reserves rows x cols)."""
    data = bytearray(portal.xls_files()[2][1])
    at = data.find(b"\x00\x02\x0e\x00")  # record 0x0200, 14 bytes
    data[at + 4 : at + 18] = (
        (0).to_bytes(4, "little") + (0xFFFFFFF0).to_bytes(4, "little")
        + (0).to_bytes(2, "little") + (0xFF).to_bytes(2, "little") + b"\x00\x00"
    )  # fmt: skip
    return bytes(data)
