"""Hostile XLSX and XLS files (issue 21): each ends in a clear error (or, for a formula,
its cached value), never a crash, a formula run or unbounded memory. Over the upload
form: tests/web/test_upload_spreadsheets.py."""

from __future__ import annotations

import io
import random
import subprocess
import sys
import zipfile
from datetime import UTC, datetime

import pytest

from reviews.engine.ingest import IngestError, Limits, UploadedFile, parse_upload
from tests.engine.ingest import hostile_spreadsheets as hostile

pytestmark = pytest.mark.slow  # bombs and memory probes

NOW = datetime(2026, 8, 2, tzinfo=UTC)
LIMITS = Limits(max_bytes=50 * 1024 * 1024, max_cells=5_000_000)

REFUSED = {
    "zip bomb": (lambda: hostile.zip_bomb(60_000_000), ".xlsx", "unpacks to 60,01"),
    "lying sizes": (hostile.lying_sizes, ".xlsx", "not a readable XLSX file (Bad CRC-32"),
    "sparse cells": (hostile.sparse_cells, ".xlsx", "its sheets span 17,179,869,184 cells"),
    "shared strings": (hostile.huge_shared_strings, ".xlsx", "xl/sharedStrings.xml declares"),
    "entity bomb": (hostile.entity_bomb, ".xlsx", "xl/worksheets/sheet1.xml declares a DTD"),
    "broken xml": (hostile.broken_xml, ".xlsx", "not a readable XLSX file"),
    "two export sheets": (hostile.two_export_sheets, ".xlsx", "2 sheets look like HubSpot"),
    "many sheets": (lambda: hostile.many_sheets(150), ".xlsx", "151 sheets"),
    "not a zip": (lambda: b"PK\x03\x04 not really", ".xlsx", "not a readable XLSX file"),
    "xls sparse": (hostile.xls_sparse, ".xls", "its sheets span 16,777,216 cells"),
    "xls dimensions": (hostile.xls_huge_dimensions, ".xls", "its sheets span 1,095,216,"),
    "xls garbage": (lambda: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600, ".xls",
                    "not a readable XLS file"),
}  # fmt: skip


def parse_one(name: str, data: bytes):
    return parse_upload([UploadedFile(name, data)], as_of=None, received_at=NOW, limits=LIMITS)


@pytest.mark.parametrize("case", REFUSED)
def test_hostile_spreadsheet_refused_with_a_clear_error(case):
    build, extension, error = REFUSED[case]

    with pytest.raises(IngestError) as caught:
        parse_one(f"deals{extension}", build())

    assert caught.value.errors[0].startswith(f"deals{extension}: "), caught.value.errors
    assert error in caught.value.errors[0], caught.value.errors


def test_hostile_spreadsheet_inside_a_zip_is_refused_the_same_way():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("export/deals.xlsx", hostile.sparse_cells())

    with pytest.raises(IngestError) as caught:
        parse_one("export.zip", out.getvalue())

    assert caught.value.errors[0].startswith("export/deals.xlsx: its sheets span")


def test_a_formula_is_never_run_its_cached_value_is_read():
    batch = parse_one("deals.xlsx", hostile.formula_amount())

    (deal,) = batch.deals
    assert deal.amount == 1200


def test_one_export_sheet_beside_others_is_read():
    batch = parse_one("deals.xlsx", hostile.export_and_notes_sheets())

    assert [(d.id, d.stage, d.amount) for d in batch.deals] == [("40001", "Closed Won", 1200)]


def test_random_corruptions_end_in_a_batch_or_a_clear_error():
    source = hostile.deals_xlsx()
    rng = random.Random(21)
    for _ in range(150):
        data = bytearray(source)
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            parse_one("deals.xlsx", bytes(data))
        except IngestError as error:
            assert error.errors[0].startswith("deals.xlsx"), error.errors


_MEMORY_PROBE = """
import resource, sys
from datetime import UTC, datetime
from reviews.engine.ingest import IngestError, Limits, UploadedFile, parse_upload
from tests.engine.ingest import hostile_spreadsheets as hostile

data = {"sparse": hostile.sparse_cells, "xls": hostile.xls_sparse,
        "sst": hostile.huge_shared_strings, "dims": hostile.xls_huge_dimensions}[sys.argv[1]]()
name = "deals.xls" if sys.argv[1] in ("xls", "dims") else "deals.xlsx"
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    parse_upload([UploadedFile(name, data)], as_of=None, received_at=datetime.now(UTC))
except IngestError:
    pass
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


@pytest.mark.parametrize("case", ["sparse", "xls", "sst", "dims"])
def test_memory_stays_bounded_on_hostile_spreadsheets(case):
    """In a process of its own, so the peak is this file's: under 100 MB more than the
    process held before (calamine would have reserved gigabytes to terabytes)."""
    done = subprocess.run(
        [sys.executable, "-c", _MEMORY_PROBE, case],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    grown_kb = int(done.stdout.strip().splitlines()[-1])
    assert grown_kb < 100 * 1024


def test_nul_and_surrogate_escapes_in_cells_are_made_safe():
    row = (
        '<row r="2"><c r="A2"><v>40001</v></c><c r="B2" t="inlineStr"><is>'
        '<t>Renewal_x0000_ _xD800_</t></is></c><c r="C2"><v>5</v></c></row>'
    )
    data = hostile.replaced(hostile.deals_xlsx(), {hostile.SHEET: hostile.sheet_xml(
        hostile.HEADER_ROW + row)})  # fmt: skip

    batch = parse_one("deals.xlsx", data)

    (deal,) = batch.deals
    assert "\x00" not in deal.name
    assert [p.path for p in batch.value_problems] == ["deals[0].name"]


def test_an_xls_saved_as_xlsx_is_read_by_its_content():
    batch = parse_one("deals.xlsx", hostile.portal.xls_files()[2][1])

    assert len(batch.deals) == len(hostile.portal.DEALS)


def test_a_password_protected_workbook_is_named_as_such():
    # An encrypted XLSX is an OLE container holding an EncryptedPackage stream: a real
    # XLS container with its Workbook stream renamed so.
    data = bytearray(hostile.portal.xls_files()[2][1])
    name = "Workbook\x00".encode("utf-16-le")
    at = data.find(name)
    data[at : at + 34] = "EncryptedPackage\x00".encode("utf-16-le")
    data[at + 64 : at + 66] = (34).to_bytes(2, "little")  # the name's length in bytes

    with pytest.raises(IngestError) as caught:
        parse_one("deals.xlsx", bytes(data))

    assert "password-protected" in caught.value.errors[0]


def test_cells_without_references_are_placed_as_the_reader_places_them():
    # The far cell has no `r`: its row's number places it (ignoring it would let the
    # reader allocate a 17-billion-cell rectangle). Without `r`, the next column.
    far = '<row r="2"><c r="XFD2"><v>1</v></c></row><row r="1048576"><c><v>1</v></c></row>'
    refused = hostile.replaced(hostile.deals_xlsx(), {hostile.SHEET: hostile.sheet_xml(
        hostile.HEADER_ROW + far)})  # fmt: skip
    near = '<row><c><v>40001</v></c><c t="inlineStr"><is><t>Deal</t></is></c><c><v>7</v></c></row>'
    read = hostile.replaced(hostile.deals_xlsx(), {hostile.SHEET: hostile.sheet_xml(
        hostile.HEADER_ROW + near)})  # fmt: skip

    with pytest.raises(IngestError) as caught:
        parse_one("deals.xlsx", refused)
    (deal,) = parse_one("deals.xlsx", read).deals

    assert "its sheets span 17,179,869,184 cells" in caught.value.errors[0]
    assert (deal.id, deal.name, deal.amount) == ("40001", "Deal", 7)
