"""Which run a dataset batch is compared with, and what the comparison needs from the
database (docs/history.md), loaded as plain data for reviews.engine.history.compare."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Q

from reviews.engine.history import compare as history
from reviews.models import Batch, Dataset, Finding, ReviewRun
from reviews.orchestration.dataset.dismissals import active_dismissals


def choose_baseline(batch: Batch) -> ReviewRun | None:
    """The latest finished, non-degraded run of an earlier batch of the batch's dataset
    (earlier as-of; for an equal as-of, uploaded earlier) whose export lacked no column a
    rule reads (a partial one did not check everything: its silence is not a baseline).
    A re-run keeps the baseline of the batch's first review, so its statuses mean the
    same."""
    if batch.dataset_id is None:
        return None
    first = batch.runs.order_by("created_at", "pk").first()
    if first is not None:
        return first.baseline_run
    earlier = Q(batch__as_of__lt=batch.as_of) | Q(
        batch__as_of=batch.as_of, batch__created_at__lt=batch.created_at
    )
    return (
        ReviewRun.objects.filter(
            earlier,
            batch__dataset_id=batch.dataset_id,
            status=ReviewRun.Status.DONE,
            degraded=False,
            batch__missing_columns=[],
        )
        .exclude(batch_id=batch.pk)
        .order_by("-batch__as_of", "-batch__created_at", "-finished_at", "-pk")
        .first()
    )


def serving_key(
    config_fingerprint: str, batch: Batch, baseline: ReviewRun | None, policy_version=None
) -> str:
    """A dataset run may only be served from a run with the same dataset, baseline,
    standing dismissals and review policy version (its values too): its findings,
    statuses and suppressions depend on them. A batch without a dataset keeps the plain
    configuration fingerprint."""
    if batch.dataset_id is None:
        return config_fingerprint
    dismissed = ",".join(sorted(active_dismissals(batch.dataset_id)))
    policy = (
        f"{policy_version.pk}:{json.dumps(policy_version.policy, sort_keys=True)}"
        if policy_version is not None
        else ""
    )
    text = (
        f"{config_fingerprint}|{batch.dataset_id}|{baseline.pk if baseline else ''}|{dismissed}"
        f"|{policy}"
    )
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(slots=True)
class HistoryContext:
    verdict_scope: str
    baseline: history.Baseline | None
    dismissed: dict[str, history.Dismissed] = field(default_factory=dict)


def standing_of(
    run: ReviewRun, comparison: history.Comparison, deal_stages: dict[str, str] | None = None
) -> dict:
    """reviews.engine.history.compare.standing, with `since_run`: the first sync of the dataset
    that reported the longest-standing of its most severe findings (the run made on the
    sync whose as-of is that first seen; this run for a batch without a dataset)."""
    found = history.standing(comparison, deal_stages)
    if found["since"] is None:
        return found
    found["since_run"] = run.pk
    if run.batch.dataset_id is not None and history.since_carried(comparison):
        first = (
            ReviewRun.objects.filter(
                batch__dataset_id=run.batch.dataset_id,
                as_of=datetime.fromisoformat(found["since"]),
                status=ReviewRun.Status.DONE,
            )
            .exclude(pk=run.pk)
            .order_by("created_at", "pk")
            .values_list("pk", flat=True)
            .first()
        )
        found["since_run"] = first or run.baseline_run_id or run.pk
    return found


def history_context(run: ReviewRun) -> HistoryContext | None:
    """What the coordinator needs to compare `run` with its baseline; None for a batch
    without a dataset (it is reviewed exactly as before)."""
    dataset: Dataset | None = run.batch.dataset
    if dataset is None:
        return None
    baseline = load_baseline(run.baseline_run) if run.baseline_run_id else None
    return HistoryContext(dataset.verdict_scope, baseline, active_dismissals(dataset.pk))


def load_baseline(run: ReviewRun) -> history.Baseline:
    """The baseline's findings and suppressed findings by fingerprint: one query."""
    findings: dict[str, history.Past] = {}
    # A cached or failback run serves the findings of the run it reuses (the same rows,
    # copied or referenced).
    rows = Finding.objects.filter(run_id=run.reused_run_id or run.pk).values_list(
        "fingerprint", "first_seen", "category", "kind", "severity", "title", "record_ids"
    )
    for key, first_seen, category, kind, severity, title, record_ids in rows.iterator(
        chunk_size=5000
    ):
        key = key or history.fingerprint(category, kind, record_ids)  # a run made before
        findings[key] = history.Past(
            key, first_seen or run.as_of, category, kind, severity, title, tuple(record_ids)
        )
    suppressed = {
        item["fingerprint"]: history.Past(
            item["fingerprint"],
            _parse(item.get("first_seen")) or run.as_of,
            item["category"],
            item["kind"],
            item["severity"],
            item["title"],
            tuple(item["record_ids"]),
        )
        for item in run.suppressed
    }
    return history.Baseline(run.pk, findings, suppressed)


def _parse(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None
