"""Review a parsed batch with the detectors and make its fix plan, without a database."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from reviews.engine import coordinator
from reviews.engine.fixes import fixplan
from reviews.engine.history.compare import fingerprint_of
from reviews.engine.ingest import UploadedFile
from reviews.engine.specialists import NAMES, detector
from reviews.orchestration.store.parsed import parse
from tests.engine.ingest.helpers import RECEIVED
from tests.engine.ingest.hubspot_exports import AS_OF

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def parsed(files: list[tuple[str, bytes]], *, as_of=AS_OF):
    return parse(
        [UploadedFile(name, data) for name, data in files], as_of=as_of, received_at=RECEIVED
    )


def sample(*names: str, as_of=None):
    return parsed([(name, (SAMPLES / name).read_bytes()) for name in names], as_of=as_of)


def findings(batch) -> list[fixplan.PlanFinding]:
    """The run's findings, in the coordinator's order, as the plan reads them."""
    found = [f for name in NAMES for f in detector(name)(batch, settings.REVIEW_RULES)]
    review = coordinator.fuse(found, batch.counts, [])
    return [plan_finding(f) for f in review.findings]


def plan_finding(f) -> fixplan.PlanFinding:
    return fixplan.PlanFinding(
        category=f.category,
        kind=f.kind,
        severity=f.severity,
        title=f.title,
        record_ids=f.record_ids,
        fingerprint=fingerprint_of(f),
        amount=f.amount_at_risk or None,
        currency=f.currency,
        suggested_fix=f.suggested_fix,
        detail=f.detail,
    )


def plan_of(batch, **kwargs) -> fixplan.FixPlan:
    return fixplan.build(batch, findings(batch), **kwargs)
