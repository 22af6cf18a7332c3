"""parse_upload's dispatch: one JSON, one to three CSVs, or one ZIP holding either."""

from __future__ import annotations

import io
import json
import zipfile

from reviews.engine.ingest import UploadedFile, file_type
from tests.engine.ingest.helpers import batch_doc, errors_of, parse_files, zipped

JSON_DOC = json.dumps(batch_doc(deals=[{"id": "dl_1", "amount": "5"}]))
COMPANIES = "Record ID,Company name\n1,Acme\n"
CONTACTS = "Record ID,Email\n2,a@acme.example\n"
DEALS = "Record ID,Deal Name\n3,Big\n"
SHAPE = (
    "upload one JSON file, one to three CSV, XLSX or CRM API JSON files, or one ZIP holding them"
)


def test_upload_nothing():
    assert errors_of(parse_files) == ["no file uploaded"]


def test_upload_zip_of_three_csvs_skipping_clutter():
    archive = zipped(
        {
            "export/": "",
            "export/hubspot-crm-exports-companies.csv": COMPANIES,
            "export/contacts.csv": CONTACTS,
            "export/deals.csv": DEALS,
            "__MACOSX/export/._deals.csv": b"\x00\x05\x16\x07junk",
            "export/.DS_Store": b"\x00\x00junk",
        }
    )

    batch = parse_files(("export.zip", archive))

    assert (batch.counts, batch.source) == (
        {"companies": 1, "contacts": 1, "deals": 1},
        "hubspot-csv",
    )


def test_upload_zip_of_one_json():
    batch = parse_files(("batch.zip", zipped({"batch.json": JSON_DOC})))

    assert [(d.id, str(d.amount)) for d in batch.deals] == [("dl_1", "5")]


def test_upload_zip_bomb_refused_by_declared_size(settings):
    settings.MAX_UPLOAD_BYTES = 1000
    archive = zipped({"deals.csv": DEALS + "4,x\n" * 500})

    assert errors_of(parse_files, ("big.zip", archive)) == [
        "big.zip: unpacks to 2,026 bytes; the limit is 1,000 bytes (MAX_UPLOAD_BYTES)"
    ]


def test_upload_zip_member_larger_than_declared_refused(settings):
    settings.MAX_UPLOAD_BYTES = 1000
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("deals.csv", DEALS + "4,x\n" * 500)
    # Rewrite the declared sizes (local header and central directory) to lie: 10 bytes.
    data = bytearray(buffer.getvalue())
    for offset in _size_fields(bytes(data)):
        data[offset : offset + 4] = (10).to_bytes(4, "little")

    # zipfile stops at the declared size, so the lie shows as a bad checksum.
    assert errors_of(parse_files, ("liar.zip", bytes(data))) == [
        "liar.zip: not a readable ZIP file (Bad CRC-32 for file 'deals.csv')"
    ]


def _size_fields(data: bytes) -> list[int]:
    """Offsets of the uncompressed-size fields of the (single) member's two headers."""
    local = data.index(b"PK\x03\x04") + 22
    central = data.index(b"PK\x01\x02") + 24
    return [local, central]


def test_upload_not_a_zip():
    errors = errors_of(parse_files, ("export.zip", b"PK\x03\x04 but not really"))

    assert errors[0].startswith("export.zip: not a readable ZIP file")


def test_upload_empty_zip():
    assert errors_of(parse_files, ("empty.zip", zipped({"__MACOSX/x": "y"}))) == [
        "empty.zip: the ZIP holds no files"
    ]


def test_upload_zip_inside_zip_refused():
    inner = zipped({"batch.json": JSON_DOC})

    assert errors_of(parse_files, ("outer.zip", zipped({"inner.zip": inner}))) == [
        "outer.zip: ZIP files inside a ZIP are not read (inner.zip)"
    ]


def test_upload_json_with_csv_refused():
    errors = errors_of(parse_files, ("batch.json", JSON_DOC), ("deals.csv", DEALS))

    assert errors == [f"{SHAPE}; got: batch.json, deals.csv"]


def test_upload_four_csvs_refused():
    files = [(f"{i}.csv", DEALS) for i in range(4)]

    assert errors_of(parse_files, *files) == [f"{SHAPE}; got: 0.csv, 1.csv, 2.csv, 3.csv"]


def test_upload_two_json_files_refused():
    errors = errors_of(parse_files, ("a.json", JSON_DOC), ("b.json", JSON_DOC))

    assert errors == [
        f"{name}: several JSON files are read only as HubSpot CRM API JSON "
        "(objects with id and properties); upload a batch JSON on its own"
        for name in ("a.json", "b.json")
    ]


def test_upload_zip_with_json_and_csv_refused():
    archive = zipped({"batch.json": JSON_DOC, "deals.csv": DEALS})

    assert errors_of(parse_files, ("mixed.zip", archive)) == [
        f"{SHAPE}; got: batch.json, deals.csv"
    ]


def test_file_type_by_extension_then_content():
    assert [
        file_type(UploadedFile(name, data))
        for name, data in [
            ("Batch.JSON", b"x"),
            ("deals.CSV", b"{"),
            ("x.zip", b""),
            ("stdin", b"PK\x03\x04rest"),
            ("stdin", b'\xef\xbb\xbf  {"companies": []}'),
            ("stdin", b"Record ID,Deal Name\n"),
        ]
    ] == ["json", "csv", "zip", "zip", "json", "csv"]


def test_an_empty_file_is_called_empty_by_its_name():
    for name in ("batch.json", "deals.csv", "deals.xlsx", "export.zip", ""):
        expected = f"{name or 'the upload'}: the file is empty (0 bytes)"
        assert errors_of(parse_files, (name, b"")) == [expected], name
    # Beside files that hold something, each empty one is named.
    assert errors_of(parse_files, ("companies.csv", COMPANIES), ("deals.csv", b"")) == [
        "deals.csv: the file is empty (0 bytes)"
    ]
    # Inside a ZIP too, by its path there.
    archive = zipped({"export/deals.csv": "", "export/companies.csv": COMPANIES})
    assert errors_of(parse_files, ("export.zip", archive)) == [
        "export/deals.csv: the file is empty (0 bytes)"
    ]


def test_a_file_of_whitespace_only_is_called_empty_too():
    assert errors_of(parse_files, ("batch.json", b"\xef\xbb\xbf \r\n\t\n")) == [
        "batch.json: the file is empty (only blank lines or spaces)"
    ]
