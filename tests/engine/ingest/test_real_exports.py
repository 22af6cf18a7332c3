"""Real HubSpot exports (issue 10): every shape a user sends gives the review the
native JSON form of the same batch gives, and a clean value is never a problem."""

from __future__ import annotations

from decimal import Decimal

import pytest

from reviews.engine import coordinator
from reviews.engine.ingest import UploadedFile
from reviews.engine.rules import Rules
from reviews.engine.specialists import NAMES, detector
from reviews.orchestration.store.parsed import parse
from tests.engine.ingest.helpers import RECEIVED
from tests.engine.ingest.hubspot_exports import AS_OF, api_files, csv_files, native_file

PLANTED = {
    ("dedup", "deal_entered_twice", "critical", ("5001", "5002")),
    ("dedup", "company_same_domain", "warning", ("9001", "9002")),
    ("dedup", "contact_same_email", "warning", ("7001", "7004")),
    ("attribution", "contact_wrong_company", "warning", ("7002", "9003", "9004")),
    ("attribution", "dangling_reference", "warning", ("7005",)),
    ("attribution", "deal_contact_elsewhere", "warning", ("5003", "7002", "9003", "9004")),
    ("pipeline", "negative_amount", "critical", ("5004",)),
    ("pipeline", "won_without_amount", "critical", ("5005",)),
    ("pipeline", "open_past_close_date", "warning", ("5004",)),
    ("freshness", "stale_enrichment", "warning", ("9003",)),
}


def parse_upload_files(files, *, as_of=AS_OF):
    uploads = [UploadedFile(name, data) for name, data in files]
    return parse(uploads, as_of=as_of, received_at=RECEIVED)


def review(batch) -> coordinator.Review:
    found = [f for name in NAMES for f in detector(name)(batch, Rules())]
    return coordinator.fuse(found, batch.counts, [])


def keys(result: coordinator.Review) -> set[tuple]:
    return {(f.category, f.kind, f.severity, tuple(sorted(f.record_ids))) for f in result.findings}


def money(result: coordinator.Review) -> dict[tuple, tuple]:
    return {
        (f.kind, tuple(sorted(f.record_ids))): (f.amount_at_risk, f.currency)
        for f in result.findings
    }


@pytest.fixture
def native():
    batch = parse_upload_files(native_file(), as_of=None)
    return batch, review(batch)


def test_native_form_finds_every_planted_problem(native):
    _, result = native

    assert keys(result) == PLANTED
    assert result.decision == "request_changes"


@pytest.mark.parametrize(
    "files",
    [
        pytest.param(csv_files(style="hubspot"), id="hubspot-csv"),
        pytest.param(csv_files(style="excel_us"), id="excel-us"),
        pytest.param(csv_files(style="excel_de", language="de"), id="excel-de-german-headers"),
        pytest.param(csv_files(language="internal"), id="internal-names"),
        pytest.param(api_files(), id="api-json-per-type"),
        pytest.param(api_files(combined=True), id="api-json-combined"),
    ],
)
def test_every_form_gives_the_native_review(files, native):
    native_batch, native_result = native

    batch = parse_upload_files(files)
    result = review(batch)

    assert keys(result) == keys(native_result)
    assert money(result) == money(native_result)
    assert result.decision == native_result.decision
    assert [p.message for p in batch.value_problems] == []
    deals = {d.id: (d.amount, d.close_date, d.company_id) for d in batch.deals}
    assert deals == {d.id: (d.amount, d.close_date, d.company_id) for d in native_batch.deals}
    contact = next(c for c in batch.contacts if c.id == "7003")
    assert (contact.company_id, contact.company_ids) == ("9004", ["9004", "9003"])


def test_csv_amounts_and_dates_read_as_written():
    batch = parse_upload_files(csv_files(style="excel_us"))

    deal = {d.id: d for d in batch.deals}
    assert deal["5001"].amount == Decimal("410000.50")
    assert deal["5004"].amount == Decimal("-5000")
    assert deal["5003"].close_date.isoformat() == "2026-06-30"
    assert {d.currency for d in batch.deals} == {"USD"}
    assert {d.owner for d in batch.deals} == {"Jordan Lee"}
    assert batch.ignored_columns == {
        "companies.csv": ["Industry"],  # Deal owner is read: Deal.owner
    }


def test_without_primary_column_the_first_associated_company_is_the_company():
    files = [(n, d.replace(b"Associated Company IDs (Primary)", b"Legacy ID")) for n, d in
             csv_files()]  # fmt: skip

    batch = parse_upload_files(files)

    contact = next(c for c in batch.contacts if c.id == "7003")
    assert (contact.company_id, contact.company_ids) == ("9004", ["9004", "9003"])
    assert ("dedup", "deal_entered_twice", "critical", ("5001", "5002")) in keys(review(batch))
