"""What the weekly digest webhook says about a dataset: its tuning proposals and the
root causes of its recurring problems (docs/history.md). The alerts wrap and deliver it
(alerts/digest.py); composing it needs the dataset's syncs and policy, which live here."""

from __future__ import annotations

from datetime import datetime

from alerts import digest
from reviews.models import Dataset
from reviews.orchestration.dataset import policies


def digest_contents(dataset: Dataset) -> dict:
    found = policies.tune_dataset(dataset)
    found.pop("_objects")
    return found


def create_digests(now: datetime | None = None) -> list[int]:
    """This week's digest deliveries not made yet. Safe to call twice."""
    return digest.create_digests(digest_contents, now)
