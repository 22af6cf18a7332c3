"""Applying a run's merge plan in the CRM (docs/output.md#applying-merges), when a staff
member asks: never by a model, never on a schedule.

A merge of the plan (a survivor and the records merged into it) is sent as one CRM
merge per merged record (HubSpot: `POST /crm/v3/objects/{type}/merge`, in
connectors/hubspot/connector.py). Each is recorded as an AppliedMerge row before it is
sent, claimed with a conditional UPDATE (pending -> applying), and answered (merged /
failed / unknown). Just before a merge is sent, both records are read whole from the
CRM and kept on the row (`snapshot`: what connectors/undo.py makes the merged record
again from); one that cannot be read is not merged (failed, nothing sent). A record
already merged, or whose merge is on its way or went unanswered, is never sent again:
HubSpot has no unmerge (an undo makes a new record), so a retried request (after a
timeout, a double click, two workers) must not merge twice. A merge HubSpot refused
(failed, with its message) is sent again only when it is named (`fingerprints`), never
by applying everything again.

The survivor is the record HubSpot's answer names: for companies and contacts the
primary, for deals a new record with a new id (the old ids become its aliases). Each row
keeps it (`survivor_id`); a later merge into the same survivor is sent to its current
id, and the rows of earlier merges into it follow the new id, so the rows and the next
pull name the same record.

`client` is anything with `snapshot(object_type, ids) -> {id: record}` and
`merge(object_type, primary_id, object_id_to_merge) -> dict` that raises MergeRefused
(the CRM answered no) or MergeUnanswered (no answer: timeout, connection lost, 5xx): a
Connector (connectors/base.py). One that also has `check()` is checked to open the
account the dataset syncs before anything is sent. connectors/write_access.py says who
may send (configured_client: the connector of the dataset's connection, with its
token); connectors/merge_steps.py makes the plan's steps and the dry run."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import replace
from typing import Any, Protocol

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from connectors.base import ConnectorError, MergeRefused, MergeUnanswered
from connectors.merge_steps import (
    Step,
    current_id,
    effects_of,
    recorded_merges,
    refusal,
    refused_merges,
    selected,
    steps_of,
)
from connectors.write_access import applies_merges, same_portal, staff_dataset
from reviews.engine.fixes.fixplan import Merge
from reviews.models import AppliedMerge, ReviewRun

logger = logging.getLogger(__name__)
Status = AppliedMerge.Status


class MergeClient(Protocol):
    def merge(self, object_type: str, primary_id: str, object_id_to_merge: str) -> dict: ...

    def snapshot(self, object_type: str, ids: list[str]) -> dict[str, dict]: ...


def apply_merges(
    run: ReviewRun,
    fingerprints: Iterable[str] | None,
    *,
    user,
    client: MergeClient,
    interval: float | None = None,
) -> list[Step]:
    """Send the selected merges of the run's plan (all of them when `fingerprints` is
    None) to HubSpot, each at most once, and record every answer. Requests are at least
    `interval` seconds apart (default HUBSPOT_MERGE_INTERVAL_SECONDS), under HubSpot's
    rate limit; one it refuses all the same (429) is `failed`: nothing merged."""
    dataset = staff_dataset(run, user)
    applies_merges(client)
    steps = steps_of(selected(run, fingerprints))
    same_portal(dataset, client)
    interval = settings.HUBSPOT_MERGE_INTERVAL_SECONDS if interval is None else interval
    done = []
    pace = _Pace(interval)
    refused = refused_merges(dataset) if fingerprints is None else {}
    recorded = recorded_merges(dataset)
    for merge, merged_id in steps:
        # Into the survivor's current id: an earlier merge of this cluster (this call's,
        # or another's) may have given it a new one.
        primary = current_id(dataset, merge.object, merge.primary)
        key = (merge.object, merged_id)
        if key in refused and key not in recorded:
            # Refused by the CRM: asked again only when a person names it, after a fix.
            done.append(
                Step(merge.object, primary, merged_id, merge.fingerprint, merge.reason,
                     "refused", refusal(refused[key]), effects_of(merge, merged_id))
            )  # fmt: skip
            continue
        row = _record(dataset, run, merge, primary, merged_id, user)
        if row.status != Status.PENDING or not _claim(row):
            done.append(_step(merge, row, row.status, "already recorded: not sent again"))
            continue
        # The request goes out after the claim is committed and outside any transaction:
        # a slow HubSpot must not hold a database lock, and the claim must stand even if
        # this process dies while waiting.
        done.append(_send(row, merge, client, pace.wait))
    # A step's survivor as the rows now say: a later merge into it may have replaced it.
    rows = AppliedMerge.objects.filter(
        dataset=dataset, merged_id__in=[s.merged_id for s in done], status=Status.MERGED
    ).values_list("object_type", "merged_id", "survivor_id")
    survivors = {(kind, merged): survivor for kind, merged, survivor in rows}
    return [
        replace(s, survivor_id=survivors.get((s.object_type, s.merged_id), s.survivor_id))
        for s in done
    ]


def _record(
    dataset, run: ReviewRun, merge: Merge, primary: str, merged_id: str, user
) -> AppliedMerge:
    """The row that holds this record's merge into `primary` (the survivor's current
    id): a new pending one, or the standing one."""
    try:
        with transaction.atomic():
            return AppliedMerge.objects.create(
                dataset=dataset,
                run=run,
                object_type=merge.object,
                primary_id=primary,
                merged_id=merged_id,
                fingerprint=merge.fingerprint,
                reason=merge.reason,
                requested_by=user,
            )
    except IntegrityError:  # merged, on its way or unanswered already (the constraint)
        return (
            AppliedMerge.objects.filter(
                dataset=dataset, object_type=merge.object, merged_id=merged_id
            )
            .exclude(status=Status.FAILED)
            .get()
        )


def _claim(row: AppliedMerge) -> bool:
    """pending -> applying, for exactly one caller."""
    claimed = AppliedMerge.objects.filter(pk=row.pk, status=Status.PENDING).update(
        status=Status.APPLYING, claimed_at=timezone.now()
    )
    return claimed == 1


class _Pace:
    """At least `interval` seconds between two merge requests; the reads a merge makes
    first (its snapshot) do not count, so their time never shortens the gap."""

    def __init__(self, interval: float) -> None:
        self.interval, self.last = interval, None

    def wait(self) -> None:
        if self.last is not None:
            time.sleep(max(0.0, self.last + self.interval - time.monotonic()))
        self.last = time.monotonic()


def _send(row: AppliedMerge, merge: Merge, client: MergeClient, pace) -> Step:
    answer: dict[str, Any] = {}
    try:
        # Both records as they are now, kept before the merge is sent: what an undo makes
        # the merged record again from (connectors/undo.py). Without it nothing is sent.
        taken = client.snapshot(row.object_type, [row.primary_id, row.merged_id])
        AppliedMerge.objects.filter(pk=row.pk).update(
            snapshot={"primary": taken[row.primary_id], "merged": taken[row.merged_id]}
        )
    except ConnectorError as error:
        detail = f"both records could not be read first, nothing sent: {error}"
        answer = {"status": Status.FAILED, "http_status": error.status, "error": detail}
        return _answered(row, merge, answer)
    pace()
    try:
        response = client.merge(row.object_type, row.primary_id, row.merged_id)
        # HubSpot's answer is the surviving record: for deals a new one, with a new id.
        survivor = str((response or {}).get("id") or row.primary_id)
        answer = {"status": Status.MERGED, "http_status": 200, "response": response,
                  "survivor_id": survivor}  # fmt: skip
    except MergeRefused as error:
        answer = {"status": Status.FAILED, "http_status": error.status, "response": error.answer,
                  "error": str(error)}  # fmt: skip
    except MergeUnanswered as error:
        answer = {"status": Status.UNKNOWN, "http_status": error.status, "error": str(error)}
    return _answered(row, merge, answer)


def _answered(row: AppliedMerge, merge: Merge, answer: dict[str, Any]) -> Step:
    logger.info(
        "merge %s %s into %s: %s", row.object_type, row.merged_id, row.primary_id, answer["status"]
    )
    with transaction.atomic():
        AppliedMerge.objects.filter(pk=row.pk, status=Status.APPLYING).update(
            answered_at=timezone.now(), **answer
        )
        survivor = answer.get("survivor_id", "")
        if survivor and survivor != row.primary_id:
            # The primary is now an alias: earlier merges into it name the new record.
            AppliedMerge.objects.filter(
                dataset_id=row.dataset_id,
                object_type=row.object_type,
                survivor_id=row.primary_id,
            ).update(survivor_id=survivor)
    row.refresh_from_db()
    return _step(merge, row, answer["status"], answer.get("error", ""))


def _step(merge: Merge, row: AppliedMerge, outcome: str, detail: str = "") -> Step:
    return Step(
        merge.object,
        row.primary_id,
        row.merged_id,
        merge.fingerprint,
        merge.reason,
        outcome,
        detail,
        effects_of(merge, row.merged_id),
        row.survivor_id,
    )
