"""Import the spool (reviews.orchestration.store.spool) once the database is back: each
upload goes in as any other (reviews.orchestration.intake.entry): stored with what it
asked for, then read and served as a worker reads a big upload; then its folder is
removed. Run by the sweep (the `reviews.import_spool` task) and by
`manage.py import_spool`."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from django.db import transaction

from ledger.ratelimit import legacy_rate_keys
from reviews.apiauth.idempotency import store_keyed
from reviews.models import Batch
from reviews.orchestration.intake.spool_senders import sender_of
from reviews.orchestration.intake.submit import (
    DatabaseUnavailable,
    accept_stored_upload,
    store_upload,
    unreachable_errors,
)
from reviews.orchestration.store import spool
from reviews.orchestration.store.spool import SenderRefused
from workspaces.access import may, only_workspace, workspaces_of
from workspaces.models import Role, Workspace

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class ImportReport:
    imported: list[tuple[str, int]] = field(default_factory=list)  # (spool id, batch id)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (spool id, reason)
    waiting: list[str] = field(default_factory=list)  # left for later: database, time


def import_spool(*, retry_failed: bool = False, seconds: float | None = None) -> ImportReport:
    """Import every spooled upload (those whose import failed before only with
    `retry_failed`). Stops at the first upload the database still refuses, and
    after `seconds` (the rest wait for the next sweep)."""
    report = ImportReport()
    deadline = time.monotonic() + seconds if seconds is not None else None
    folders = spool.pending(include_failed=retry_failed)
    for i, folder in enumerate(folders):
        if deadline is not None and time.monotonic() > deadline:
            report.waiting.extend(f.name for f in folders[i:])
            break
        with spool.claimed(folder) as mine:
            if not mine:
                continue  # another importer has it
            try:
                batch, new = store_one(folder)
            except DatabaseUnavailable as error:
                logger.warning("spool: the database is still unavailable (%s)", error)
                report.waiting.extend(f.name for f in folders[i:])
                break
            except Exception as error:  # kept with its reason, never lost
                reason = f"{type(error).__name__}: {error}"
                logger.exception("spool: %s could not be imported", folder.name)
                spool.mark_failed(folder, reason)
                report.failed.append((folder.name, reason))
                continue
        report.imported.append((folder.name, batch.pk))
        if new:  # else reviewed when it was first stored
            review_stored_upload(batch)
    return report


def store_one(folder: Path) -> tuple[Batch, bool]:
    """Store one spooled upload as received, then remove its folder: the bytes are in
    the database from then on, and a retry must not store them twice. An upload whose
    sender no longer holds (reviews.orchestration.intake.spool_senders) is stored for no user,
    with the reason among its `refused` errors. One sent with an Idempotency-Key claims
    it for its batch in the same transaction, before the folder goes: a retry of the
    request is answered with that batch, and an import run again (stopped between the
    commit and the removal) finds it and stores nothing (returned False)."""
    meta = spool.read_meta(folder)
    files = spool.sources(folder, meta)
    try:
        user = sender_of(meta)
    except SenderRefused as refusal:
        user = None
        meta["refused"] = [str(refusal), *meta.get("refused", [])]
        logger.warning("spool: %s: %s", folder.name, refusal)
    workspace = meta.get("workspace_id")
    if workspace is not None and not Workspace.objects.filter(pk=workspace).exists():
        workspace = None
    if user is not None and workspace is None:  # kept before uploads named one
        workspace = only_workspace(user, Role.REVIEWER)
    if user is not None and not may(user, getattr(workspace, "pk", workspace), Role.REVIEWER):
        # Kept rejected, in a workspace of its own user's (never in the one it named).
        refusal = f"{user.get_username()} may not upload to that workspace (reviewer role needed)"
        meta["refused"] = [refusal, *meta.get("refused", [])]
        logger.warning("spool: %s: %s", folder.name, refusal)
        workspace = workspaces_of(user).first()

    def store() -> Batch:
        return store_upload(
            files,
            created_by=user,
            workspace=workspace,
            as_of=datetime.fromisoformat(meta["as_of"]) if meta.get("as_of") else None,
            dataset=meta.get("dataset"),
            rate_keys=meta["rate_keys"]
            if "rate_keys" in meta
            else legacy_rate_keys(meta.get("client_ip")),  # spooled before rate_keys
            refused=meta.get("refused"),
            # Received then, not now: a batch without its own as-of is reviewed as of then.
            received_at=datetime.fromisoformat(meta["received_at"]),
            # Stored already if its store's commit went through unanswered: not again.
            intake_key=meta.get("intake_key"),
        )

    # An upload sent with an Idempotency-Key claims it for its batch (the API's keys):
    # or finds it already holds this upload's batch (an import that ran before).
    keyed = meta.get("idempotency_key") and user is not None
    try:
        with transaction.atomic():
            batch, new = store_keyed(user, meta, files, store) if keyed else (store(), True)
    except unreachable_errors() as error:  # at the commit: nothing was stored
        raise DatabaseUnavailable.of(error) from error
    spool.remove(folder)
    if new:
        logger.info("spool: %s imported as batch %s", folder.name, batch.pk)
    else:
        logger.warning("spool: %s was imported before, as batch %s", folder.name, batch.pk)
    return batch, new


def review_stored_upload(batch: Batch) -> None:
    """Parse and serve an imported upload as a worker does a big one (one the form
    refused, or whose sender did not hold, was stored rejected with why). A failure here
    is the batch's, as for any upload: logged, and the batch is kept."""
    try:
        accept_stored_upload(batch.pk)
    except Exception:
        logger.exception("spool: batch %s was stored but could not be reviewed", batch.pk)
