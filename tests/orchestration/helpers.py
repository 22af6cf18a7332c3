"""Rows for the serving and spend tests, made through the real submit and review path
where a finished review is needed, and directly where only the numbers matter."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from ledger.models import LedgerEntry
from reviews.engine.batch import Batch as ParsedBatch
from reviews.engine.ingest import UploadedFile, parse_upload
from reviews.models import Batch, ReviewRun
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review

EXPORTED_AT = "2026-08-01T09:00:00Z"


def seed_batch() -> dict:
    return {
        "id": "seed",
        "exportedAt": EXPORTED_AT,
        "companies": [
            {"id": "co_201", "name": "Vertex Robotics", "domain": "vertexrobotics.example"},
            {"id": "co_202", "name": "Vertex Robotics LLC", "domain": "vertexrobotics.example"},
        ],
        "contacts": [
            {"id": "ct_201", "email": "dana.kim@vertexrobotics.example", "companyId": "co_201"},
            {"id": "ct_202", "email": "dana.kim@vertexrobotics.example", "companyId": "co_202"},
        ],
        "deals": [
            {"id": "dl_201", "name": "Vertex cell automation", "amount": 410000,
             "stage": "decisionmakerboughtin", "closeDate": "2026-07-31", "companyId": "co_201"}
        ],
    }  # fmt: skip


def parse(data: bytes | str) -> ParsedBatch:
    if isinstance(data, str):
        data = data.encode()
    return parse_upload(
        [UploadedFile("batch.json", data)], as_of=None, received_at=datetime.now(UTC)
    )


def reviewed_run(batch: dict, *, degraded: bool = False) -> ReviewRun:
    """A finished fresh run of `batch` (no_cache: a second one of the same content too)."""
    files = [UploadedFile("batch.json", json.dumps(batch).encode())]
    run = submit(files, dispatch=False, no_cache=True).run
    assert run.mode == ReviewRun.Mode.FRESH
    start_review.apply(kwargs={"run_id": run.pk})
    if degraded:
        ReviewRun.objects.filter(pk=run.pk).update(degraded=True)
    run.refresh_from_db()
    assert run.status == ReviewRun.Status.DONE
    return run


def make_run(
    *,
    created_at: datetime,
    mode: str = ReviewRun.Mode.FRESH,
    tier: str = ReviewRun.Tier.TRIVIAL,
    status: str = ReviewRun.Status.DONE,
    records: tuple[int, int, int] = (2, 2, 1),
) -> ReviewRun:
    companies, contacts, deals = records
    batch = Batch.objects.create(
        file_name="b.json",
        sha256="0" * 64,
        size_bytes=1,
        status=Batch.Status.ACCEPTED,
        companies=companies,
        contacts=contacts,
        deals=deals,
    )
    run = ReviewRun.objects.create(
        batch=batch, mode=mode, tier=tier, status=status, as_of=created_at
    )
    ReviewRun.objects.filter(pk=run.pk).update(created_at=created_at)  # auto_now_add
    return run


def make_entry(
    *,
    created_at: datetime,
    run: ReviewRun | None = None,
    agent: str = "dedup",
    model: str | None = "google/gemini-2.5-flash-lite",
    input_tokens: int = 0,
    cached_tokens: int = 0,
    output_tokens: int = 0,
    cost_micros: int = 0,
    outcome: str = LedgerEntry.Outcome.OK,
) -> LedgerEntry:
    entry = LedgerEntry.objects.create(
        run=run,
        agent=agent,
        model_requested=model or "google/gemini-2.5-flash-lite",
        model=model,
        input_tokens=input_tokens,
        cached_tokens=cached_tokens,
        output_tokens=output_tokens,
        cost_micros=cost_micros,
        outcome=outcome,
    )
    LedgerEntry.objects.filter(pk=entry.pk).update(created_at=created_at)
    return entry
