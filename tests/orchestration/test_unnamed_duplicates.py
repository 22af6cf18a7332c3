"""A deal entered twice is found whatever its name (issue 40): copies whose names clean
to nothing (only NUL characters, blank, none) are one unnamed deal entered twice when
their company, amount and close date agree, through JSON and CSV uploads and the real
review path (on Postgres, which cannot hold NUL, where it is up)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from reviews.engine.ingest import UploadedFile
from reviews.models import ReviewRun
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review

pytestmark = pytest.mark.django_db

AS_OF = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)


def reviewed(files: list[UploadedFile]) -> ReviewRun:
    submission = submit(files, as_of=AS_OF, dispatch=False, no_cache=True)
    assert submission.accepted, submission.errors
    start_review.apply(kwargs={"run_id": submission.run.pk})
    submission.run.refresh_from_db()
    assert (submission.run.status, submission.run.degraded) == (ReviewRun.Status.DONE, False)
    return submission.run


def json_batch(*deals: tuple[str, str | None, int, str]) -> UploadedFile:
    doc = {
        "companies": [{"id": "co_1", "name": "Harbor", "domain": "harbor.example"}],
        "contacts": [],
        "deals": [
            {"id": rid, "name": name, "amount": amount, "stage": "contractsent",
             "closeDate": close, "companyId": "co_1"}
            for rid, name, amount, close in deals
        ],
    }  # fmt: skip
    return UploadedFile("batch.json", json.dumps(doc).encode())  # NUL as \u0000


def csv_batch(*deals: tuple[str, str | None, int, str]) -> list[UploadedFile]:
    companies = "Record ID,Company name,Company Domain Name\n9001,Harbor,harbor.example\n"
    rows = "".join(
        f"{rid},{name or ''},{amount},Contract Sent,{close},9001\n"
        for rid, name, amount, close in deals
    )
    header = "Record ID,Deal Name,Amount,Deal Stage,Close Date,Associated Company IDs\n"
    return [
        UploadedFile("companies.csv", companies.encode()),
        UploadedFile("deals.csv", (header + rows).encode()),  # NUL as a byte
    ]


def duplicates(run: ReviewRun) -> list[list[str]]:
    return sorted(f.record_ids for f in run.findings.filter(kind="deal_entered_twice"))


@pytest.mark.parametrize(
    ("first", "second"),
    [("\x00\x00", "\x00\x00"), ("\x00\x00", ""), ("  ", None), ("\x00", "--")],
)
def test_unnamed_copies_uploaded_as_json_are_a_deal_entered_twice(first, second):
    run = reviewed(
        [json_batch(("dl_1", first, 50000, "2026-09-01"), ("dl_2", second, 50000, "2026-09-02"))]
    )

    assert duplicates(run) == [["dl_1", "dl_2"]]
    assert run.verdict.decision == "request_changes"


@pytest.mark.parametrize(("first", "second"), [("\x00\x00", "\x00\x00"), ("\x00\x00", "")])
def test_unnamed_copies_uploaded_as_csv_are_a_deal_entered_twice(first, second):
    run = reviewed(
        csv_batch(("5001", first, 50000, "2026-09-01"), ("5002", second, 50400, "2026-09-01"))
    )

    assert duplicates(run) == [["5001", "5002"]]
    assert run.verdict.decision == "request_changes"


def test_unnamed_deals_at_different_amounts_or_dates_are_not_duplicates():
    run = reviewed(
        [
            json_batch(
                ("dl_1", "\x00\x00", 50000, "2026-09-01"),
                ("dl_2", "\x00\x00", 90000, "2026-09-01"),  # another amount
                ("dl_3", "", 50000, "2027-03-01"),  # another close date
            )
        ]
    )

    assert duplicates(run) == []
