"""The audit trail is append-only: ledger entries, verdicts and break-glass overrides are
evidence. A run that holds any of that evidence is not deleted by accident; a superuser
may purge it on purpose, with a reason that the admin's history keeps."""

from __future__ import annotations

import logging

from django.contrib.admin.models import DELETION, LogEntry
from django.db import transaction
from django.db.models import QuerySet

from ledger.models import LedgerEntry
from reviews.models import ReviewRun, Verdict

log = logging.getLogger(__name__)


def why_kept(run: ReviewRun) -> str:
    """Why deleting this run would lose evidence, or "" if it would not."""
    reasons = []
    calls = LedgerEntry.objects.filter(run=run).count()
    if calls:
        reasons.append(f"it holds {calls} ledger row{'s' if calls != 1 else ''}")
    if Verdict.objects.filter(run=run, overridden_at__isnull=False).exists():
        reasons.append("its verdict was overridden by break glass")
    return " and ".join(reasons)


def purge_runs(runs: QuerySet[ReviewRun], user, reason: str) -> int:
    """Delete runs on purpose, with their findings and verdicts. Their ledger rows stay
    (no longer linked to a run), and the admin history records who purged what and why."""
    if not user.is_superuser:
        raise PermissionError("only a superuser can purge runs")
    reason = reason.replace("\x00", "").strip()  # Postgres text cannot hold NUL
    if not reason:
        raise ValueError("a purge needs a reason")
    with transaction.atomic():
        runs = list(runs.select_related("batch"))
        LogEntry.objects.log_actions(
            user_id=user.pk,
            queryset=runs,
            action_flag=DELETION,
            change_message=f"Purged: {reason}",
            single_object=len(runs) == 1,
        )
        for run in runs:
            run.delete()
    log.info("user %s purged runs %s", user.pk, [run.pk for run in runs])
    return len(runs)
