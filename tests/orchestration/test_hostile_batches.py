"""Hostile batches through the database (Postgres): text Postgres cannot hold never costs
a finding or changes a verdict, and a save that fails says why."""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest

from reviews.engine.ingest import UploadedFile
from reviews.models import AgentRun, Batch, BatchFile, ReviewRun
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from reviews.orchestration.store.blob_store import file_bytes
from reviews.orchestration.store.parsed import keep_parsed, load_parsed
from tests.engine.ingest.helpers import batch_doc
from tests.orchestration.test_cli import review_json

pytestmark = pytest.mark.django_db

TWIN_DEALS = [
    {
        "id": "dl_1",
        "name": "Renewal\x00",
        "amount": 50000,
        "stage": "contractsent",
        "closeDate": "2026-09-01",
        "companyId": "co_1",
    },
    {
        "id": "dl_2",
        "name": "Renewal\x00",
        "amount": 50000,
        "stage": "contractsent",
        "closeDate": "2026-09-02",
        "companyId": "co_1",
    },
]
COMPANY = {"id": "co_1", "name": "Acme", "domain": "acme.example"}


def review(doc: dict, name: str = "batch.json") -> ReviewRun:
    data = json.dumps(doc).encode()  # NUL and surrogates as \\u escapes, as exported
    submission = submit([UploadedFile(name, data)], dispatch=False)
    assert submission.accepted, submission.errors
    start_review.apply(kwargs={"run_id": submission.run.pk})
    submission.run.refresh_from_db()
    return submission.run


def finding_kinds(run: ReviewRun) -> list[tuple[str, list[str]]]:
    return sorted((f.kind, f.record_ids) for f in run.findings.all())


def test_nul_in_twin_deal_names_still_requests_changes(postgres):
    run = review(batch_doc(exportedAt="2026-08-01", companies=[COMPANY], deals=TWIN_DEALS))

    assert (run.status, run.degraded) == (ReviewRun.Status.DONE, False)
    assert run.verdict.decision == "request_changes"
    assert finding_kinds(run) == [
        ("deal_entered_twice", ["dl_1", "dl_2"]),
        ("invalid_value", ["dl_1"]),
        ("invalid_value", ["dl_2"]),
    ]
    duplicate = run.findings.get(kind="deal_entered_twice")
    assert "Renewal\\u0000" in duplicate.detail or "Renewal\\u0000" in duplicate.title


@pytest.mark.parametrize("hostile", ["\udc80", "\ud83d", "\x00"])
def test_hostile_text_in_every_top_level_field_reviews_cleanly(postgres, hostile):
    doc = batch_doc(
        id=f"batch{hostile}",
        source=f"hubspot{hostile}",
        exportedAt="2026-08-01",
        companies=[{**COMPANY, f"note{hostile}": f"x{hostile}"}],
        deals=[{**d, "name": f"Renewal{hostile}"} for d in TWIN_DEALS],
    )

    run = review(doc, name=f"export{hostile}.json")

    assert run.status == ReviewRun.Status.DONE
    assert run.verdict.decision == "request_changes"
    batch = run.batch
    escaped = f"\\u{ord(hostile):04x}"
    assert batch.external_id == f"batch{escaped}"
    assert batch.source == f"hubspot{escaped}"
    assert batch.file_name == f"export{escaped}.json"
    found = finding_kinds(run)
    assert ("invalid_value", []) in found  # the batch's own id and source name no record
    # + the note and the two names
    assert [kind for kind, _ in found].count("invalid_value") >= 5
    assert ("deal_entered_twice", ["dl_1", "dl_2"]) in found


def test_duplicate_hostile_id_is_rejected_with_the_upload_kept(postgres):
    data = json.dumps(batch_doc(deals=[{"id": "dl\udc80"}, {"id": "dl\udc80"}])).encode()

    submission = submit([UploadedFile("dup.json", data)], dispatch=False)

    batch = Batch.objects.get(pk=submission.batch.pk)
    assert batch.status == Batch.Status.REJECTED
    assert batch.errors == ['deals[1].id: duplicate of deals[0] ("dl\\udc80")']
    assert file_bytes(BatchFile.objects.get(batch=batch)) == data


def test_5000_digit_close_date_is_a_finding_not_a_crash(postgres):
    data = (
        b'{"companies": [], "contacts": [], "deals": [{"id": "dl_1", "closeDate": %s},'
        b'{"id": "dl_2", "closeDate": "%s"}]}' % (b"9" * 5000, b"9" * 5000)
    )
    submission = submit([UploadedFile("long.json", data)], dispatch=False)
    start_review.apply(kwargs={"run_id": submission.run.pk})

    run = ReviewRun.objects.get(pk=submission.run.pk)
    invalid = [(f.record_ids, f.detail[:24]) for f in run.findings.filter(kind="invalid_value")]
    assert sorted(invalid) == [
        (["dl_1"], "deals[0].closeDate: not "),
        (["dl_2"], "deals[1].closeDate: not "),
    ]


def test_text_postgres_refuses_that_bypasses_ingest_loses_no_finding(postgres):
    run = review(batch_doc(exportedAt="2026-08-01", companies=[COMPANY], deals=TWIN_DEALS))
    # A detector that produces text Postgres refuses: the parsed batch bypasses ingest.
    parsed = load_parsed(run.batch)
    parsed.deals = [replace(d, name="Renewal\x00") for d in parsed.deals]
    keep_parsed(run.batch.pk, parsed)
    ReviewRun.objects.filter(pk=run.pk).update(status=ReviewRun.Status.QUEUED)
    run.findings.all().delete()
    run.agents.update(status=AgentRun.Status.PENDING, packed_findings=b"", error="")

    start_review.apply(kwargs={"run_id": run.pk})

    # The agent's blob holds any text; the findings writer makes it storable.
    assert set(run.agents.values_list("status", flat=True)) == {AgentRun.Status.DONE}
    run.refresh_from_db()
    assert (run.status, run.degraded) == (ReviewRun.Status.DONE, False)
    assert run.verdict.decision == "request_changes"
    duplicate = run.findings.get(kind="deal_entered_twice")
    assert "\x00" not in duplicate.title + duplicate.detail
    assert "Renewal" in duplicate.title + duplicate.detail


def test_cli_reviews_a_hostile_batch_from_a_non_utf8_file_name(postgres, tmp_path):
    doc = batch_doc(exportedAt="2026-08-01", companies=[COMPANY], deals=TWIN_DEALS)
    path = tmp_path / os.fsdecode(b"export-\xff.json")  # a Latin-1 name on a UTF-8 system
    path.write_bytes(json.dumps(doc).encode())

    code, report = review_json(path)

    assert (code, report["verdict"]) == (1, "request_changes")
    assert Batch.objects.get().file_name == "export-\\udcff.json"


def test_a_1000_character_file_name_is_stored_shortened_keeping_its_extension(postgres):
    data = json.dumps(batch_doc()).encode()
    name = "x" * 995 + ".json"

    submission = submit([UploadedFile(name, data)], dispatch=False)

    stored = BatchFile.objects.get(batch=submission.batch)
    assert len(stored.name) == 500 and stored.name.endswith("x.json") and "…" in stored.name
    assert file_bytes(stored) == data and submission.accepted
