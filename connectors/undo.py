"""Undoing applied merges (docs/output.md#undoing-a-merge), when a staff member asks:
a dry run first, each undo at most once.

Before a merge is sent, both records are read whole from HubSpot and kept on its
AppliedMerge row (`snapshot`, connectors/merges.py). Undo makes the merged-away record
again from that snapshot: a create with every property value that can be set (HubSpot
gives it a new id, kept as `restored_id`: the old id -> the new), then its associations,
each to the record's id now (one merged away since is its survivor). It is claimed with
a conditional UPDATE ("" -> undoing), so a retried request never makes the record twice;
a create HubSpot refused is recorded with its message (`failed`) and asked again only
when named (`fingerprints`), never by a rerun of everything; one unanswered (`unknown`)
is never resent.

What undo cannot bring back, said on every step (CANNOT): HubSpot keeps the merged
record's activities and engagement history (emails, calls, meetings, notes, tasks) on
the survivor; the survivor keeps the associations the merge moved to it and the values
it took; the record's create date, its old id and the values HubSpot alone writes
(listed per record) are new. A contact whose email the survivor still holds is refused
by HubSpot (409): remove that email from the survivor first, then undo it by name.

`client` is a Connector (connectors/base.py): `recreate` and `associate`."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Q, QuerySet
from django.utils import timezone

from connectors.base import WriteRefused, WriteUnanswered
from connectors.hubspot.records import lost_on_undo, writable
from connectors.merge_steps import current_id
from connectors.write_access import MergeNotAllowed, same_portal, staff_dataset
from reviews.models import AppliedMerge, ReviewRun

logger = logging.getLogger(__name__)
Undo = AppliedMerge.Undo
CANNOT = (
    "activities and engagement history stay on the survivor; the survivor keeps what the "
    "merge moved to it; the record gets a new id and create date"
)


@dataclass(frozen=True, slots=True)
class UndoStep:
    """One merged record made again: what the dry run shows and what undoing it did."""

    object_type: str
    merged_id: str
    survivor_id: str
    fingerprint: str
    outcome: str  # dry run: "would undo" or why not; undone: the row's undo status
    restored_id: str = ""  # the record made again (its new id)
    detail: str = ""
    restores: str = ""  # what the snapshot gives back
    cannot: str = ""  # what it cannot


def applied(dataset) -> QuerySet[AppliedMerge]:
    """The dataset's merges HubSpot made, newest first: what can be undone."""
    return AppliedMerge.objects.filter(dataset=dataset, status=AppliedMerge.Status.MERGED)


def undo_dry_run(
    run: ReviewRun, fingerprints: Iterable[str] | None = None, *, user
) -> list[UndoStep]:
    """What undo_merges would do for the run's applied merges; writes nothing."""
    dataset = staff_dataset(run, user)
    return [planned(row) for row in _selected(dataset, run, fingerprints)]


def undo_merges(
    run: ReviewRun, fingerprints: Iterable[str] | None, *, user, client
) -> list[UndoStep]:
    """Make the merged records of the run's applied merges (those of `fingerprints`, or
    all) again in HubSpot, each at most once, and record what HubSpot answered."""
    dataset = staff_dataset(run, user)
    rows = _selected(dataset, run, fingerprints)
    same_portal(dataset, client)
    named = fingerprints is not None
    return [_undo(dataset, row, user, client, named) for row in rows]


def _selected(dataset, run: ReviewRun, fingerprints: Iterable[str] | None) -> list[AppliedMerge]:
    rows = list(applied(dataset).filter(run=run).order_by("requested_at", "id"))
    if fingerprints is None:
        return rows
    wanted = set(fingerprints)
    unknown = wanted - {r.fingerprint for r in rows}
    if unknown:
        raise MergeNotAllowed(
            f"no merge of run {run.pk} applied with fingerprint {', '.join(sorted(unknown))}"
        )
    return [r for r in rows if r.fingerprint in wanted]


def planned(row: AppliedMerge) -> UndoStep:
    """What undoing this row would do, or why it would not: its dry run, from the row."""
    if row.undo_status == Undo.UNDONE:
        return _step(row, "undone", f"already undone: now {row.restored_id}")
    if row.snapshot is None:
        return _step(row, "cannot undo", "merged before snapshots were kept: nothing to undo from")
    if row.undo_status == Undo.FAILED:
        return _step(row, "failed", f"refused before: {row.undo_error} (name it to ask again)")
    if row.undo_status in (Undo.UNDOING, Undo.UNKNOWN):
        return _step(row, row.undo_status, "sent before, no answer: check in HubSpot")
    return _step(row, "would undo")


def _undo(dataset, row: AppliedMerge, user, client, named: bool) -> UndoStep:
    if row.snapshot is None or row.undo_status not in (Undo.NONE, Undo.FAILED):
        return planned(row)
    if row.undo_status == Undo.FAILED and not named:
        return planned(row)  # refused: never asked again by a rerun of everything
    claimed = (
        AppliedMerge.objects.filter(pk=row.pk, undo_status=row.undo_status)
        .filter(Q(undo_status=Undo.NONE) | Q(undo_status=Undo.FAILED))
        .update(undo_status=Undo.UNDOING, undo_claimed_at=timezone.now(), undone_by=user)
    )
    if claimed != 1:
        row.refresh_from_db()
        return _step(row, row.undo_status, "already recorded: not sent again")
    record = row.snapshot["merged"]
    # The create goes out after the claim is committed and outside any transaction (the
    # claim must stand if this process dies waiting); it is sent once: no answer may
    # have made the record.
    try:
        new_id = client.recreate(row.object_type, record)
    except WriteRefused as error:
        return _answered(row, Undo.FAILED, error=str(error), detail={"response": error.answer})
    except WriteUnanswered as error:
        return _answered(row, Undo.UNKNOWN, error=str(error))
    AppliedMerge.objects.filter(pk=row.pk).update(restored_id=new_id)
    made, problems = client.associate(
        row.object_type,
        new_id,
        record,
        lambda kind, rid: current_id(dataset, kind, rid),
    )
    detail = {"associations": made, "refused": problems, "not_set": lost_on_undo(record)}
    return _answered(row, Undo.UNDONE, detail=detail)


def _answered(row: AppliedMerge, status: str, *, error: str = "", detail=None) -> UndoStep:
    logger.info("undo %s %s: %s", row.object_type, row.merged_id, status)
    AppliedMerge.objects.filter(pk=row.pk, undo_status=Undo.UNDOING).update(
        undo_status=status, undone_at=timezone.now(), undo_error=error, undo_detail=detail
    )
    row.refresh_from_db()
    if status == Undo.UNDONE:
        refused = "; ".join(detail["refused"])
        text = f"{detail['associations']} associations made" + (
            f"; refused: {refused}" if refused else ""
        )
        return _step(row, status, text)
    return _step(row, status, error)


def _step(row: AppliedMerge, outcome: str, detail: str = "") -> UndoStep:
    record = (row.snapshot or {}).get("merged") or {}
    links = record.get("associations") or {}
    restores = ""
    if record:
        linked = ", ".join(f"{len(v)} {k}" for k, v in links.items() if v)
        restores = f"{len(writable(record))} values" + (f", {linked}" if linked else "")
    not_set = lost_on_undo(record) if record else []
    cannot = CANNOT + (f"; not set again: {', '.join(not_set)}" if not_set else "")
    return UndoStep(
        row.object_type,
        row.merged_id,
        row.survivor_id,
        row.fingerprint,
        outcome,
        row.restored_id,
        detail,
        restores,
        cannot,
    )
