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
account the dataset syncs before anything is sent. configured_client gives the
connector of the dataset's connection, with its token."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from connectors import preflight, registry
from connectors.base import Connector, ConnectorError, MergeRefused, MergeUnanswered
from connectors.models import Connection
from reviews.engine.fixes.fixplan import Merge
from reviews.models import AppliedMerge, Dataset, ReviewRun
from reviews.orchestration.fixes.fixplan import plan_for_run

logger = logging.getLogger(__name__)
Status = AppliedMerge.Status


class MergeClient(Protocol):
    def merge(self, object_type: str, primary_id: str, object_id_to_merge: str) -> dict: ...

    def snapshot(self, object_type: str, ids: list[str]) -> dict[str, dict]: ...


class MergeNotAllowed(Exception):
    """The request cannot be made (not staff, no dataset, no plan), and why."""


@dataclass(frozen=True, slots=True)
class Step:
    """One HubSpot merge: what the dry run shows and what applying it did."""

    object_type: str
    primary_id: str
    merged_id: str
    fingerprint: str
    reason: str
    outcome: str  # dry run: "would merge" or the row's status; applied: the new status
    detail: str = ""
    effects: str = ""  # what the merge moves to the survivor and what it loses (the plan)
    survivor_id: str = ""  # the record HubSpot answered with ("" before an answer)
    # The pre-flight (dry run with a client): what the survivor would not keep, read from
    # the CRM now, one line per property; `read_error` when they could not be read.
    loses: tuple[str, ...] = ()
    read_error: str = ""


def effects_of(merge: Merge, merged_id: str) -> str:
    """'moves contacts ct_2; loses name "Acme Inc" (keeps "Acme")' for one merged record."""
    parts = []
    for move in merge.moves:
        if move["from"] == merged_id:
            moved = ", ".join(f"{k} {' '.join(v)}" for k, v in move.items() if k != "from")
            parts.append(f"moves {moved}")
    for loss in merge.loses:
        if loss["record_id"] == merged_id:
            parts.append(f'loses {loss["property"]} "{loss["value"]}" (keeps "{loss["kept"]}")')
    if merge.check:
        parts.insert(0, merge.check)
    return "; ".join(parts) or "nothing moves or is lost"


def steps_of(merges: Iterable[Merge]) -> list[tuple[Merge, str]]:
    """Each merge of the plan as HubSpot merges: one per record merged into the survivor."""
    return [(merge, merged_id) for merge in merges for merged_id in merge.merge]


def dry_run(
    run: ReviewRun, fingerprints: Iterable[str] | None = None, *, user, client=None
) -> list[Step]:
    """What apply_merges would send, with what is already recorded; writes nothing. With
    a `client`, the pre-flight: both records of each merge still to send are read from
    the CRM now, and `loses` lists, property by property, the values the survivor would
    not keep (its own win where it has one; see preflight.py)."""
    dataset = staff_dataset(run, user)
    if client is not None:
        _applies_merges(client)
    recorded = _recorded(dataset)
    refused = _refused(dataset)
    steps = []
    for merge, merged_id in steps_of(_selected(run, fingerprints)):
        key = (merge.object, merged_id)
        outcome = recorded.get(key) or ("refused" if key in refused else "would merge")
        step = Step(
            merge.object,
            current_id(dataset, merge.object, merge.primary),
            merged_id,
            merge.fingerprint,
            merge.reason,
            outcome,
            detail=_refusal(refused[key]) if outcome == "refused" else "",
            effects=effects_of(merge, merged_id),
        )
        if client is not None and outcome in ("would merge", "refused"):
            step = _preflight(step, client)
        steps.append(step)
    return steps


def _preflight(step: Step, client) -> Step:
    """The step with what the survivor would lose, read now; or why it could not be."""
    try:
        taken = client.snapshot(step.object_type, [step.primary_id, step.merged_id])
    except ConnectorError as error:
        return replace(step, read_error=f"could not read both records now: {error}")
    loses = preflight.survivor_loses(taken[step.primary_id], taken[step.merged_id])
    return replace(step, loses=tuple(loses))


def _refused(dataset) -> dict[tuple[str, str], str]:
    """The latest refusal of each record whose merge was refused and not asked since."""
    rows = (
        AppliedMerge.objects.filter(dataset=dataset, status=Status.FAILED)
        .order_by("requested_at", "id")
        .values_list("object_type", "merged_id", "error")
    )
    return {(kind, merged): error for kind, merged, error in rows}


def _refusal(error: str) -> str:
    return f"refused before: {error or 'no message'} (sent again only when named)"


def current_id(dataset, object_type: str, record_id: str) -> str:
    """The id a record has now, after the merges recorded for the dataset: a record
    merged away, or a deal that a merge replaced with a new one, is its survivor's; one
    made again by an undo (connectors/undo.py) is the new record's."""
    now: dict[str, str] = {}
    rows = AppliedMerge.objects.filter(
        dataset=dataset, object_type=object_type, status=Status.MERGED
    ).exclude(survivor_id="")
    for primary, merged, survivor, restored in rows.values_list(
        "primary_id", "merged_id", "survivor_id", "restored_id"
    ):
        # An undone merge's record was made again: its old id names the new record.
        now[merged] = restored or survivor
        if primary != survivor:
            now[primary] = survivor
    seen = set()
    while record_id in now and record_id not in seen:  # a chain of merges, never a loop
        seen.add(record_id)
        record_id = now[record_id]
    return record_id


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
    _applies_merges(client)
    steps = steps_of(_selected(run, fingerprints))
    same_portal(dataset, client)
    interval = settings.HUBSPOT_MERGE_INTERVAL_SECONDS if interval is None else interval
    done = []
    pace = _Pace(interval)
    refused = _refused(dataset) if fingerprints is None else {}
    recorded = _recorded(dataset)
    for merge, merged_id in steps:
        # Into the survivor's current id: an earlier merge of this cluster (this call's,
        # or another's) may have given it a new one.
        primary = current_id(dataset, merge.object, merge.primary)
        key = (merge.object, merged_id)
        if key in refused and key not in recorded:
            # Refused by the CRM: asked again only when a person names it, after a fix.
            done.append(
                Step(merge.object, primary, merged_id, merge.fingerprint, merge.reason,
                     "refused", _refusal(refused[key]), effects_of(merge, merged_id))
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


def _applies_merges(client) -> None:
    """MergeNotAllowed, with the connector's reason, for a CRM whose merges revreview
    exports rather than sends (Salesforce: a SOAP call)."""
    if not getattr(client, "applies_merges", True):
        raise MergeNotAllowed(
            getattr(client, "merges_refusal", "this CRM's merges are not applied")
        )


def staff_dataset(run: ReviewRun, user):
    """The run's dataset, read afresh, when `user` is staff: what every write to the CRM
    (a merge, an undo, a task) checks first; MergeNotAllowed otherwise."""
    if user is None or not user.is_authenticated or not user.is_staff:
        raise MergeNotAllowed("merges are applied by a staff member")
    # Read afresh: the portal id decides where merges go, and may have just been set.
    dataset = Dataset.objects.filter(pk=run.batch.dataset_id).first()
    if dataset is None:
        raise MergeNotAllowed(f"run {run.pk} belongs to no dataset: no CRM to merge in")
    return dataset


def same_portal(dataset, client: MergeClient) -> None:
    """Merges go only to the portal the dataset syncs: its HubSpot portal id (the field
    the connector names, dataset_account_field) must be set and, when the client can
    tell which portal its token opens (check()), be that one. A token of another account
    would merge whatever records there carry the same ids."""
    field = getattr(client, "dataset_account_field", "hubspot_portal_id")
    if field:
        expected = getattr(dataset, field)
    else:  # no Dataset field names this CRM's account: the connection's does (its org id)
        connection = Connection.objects.filter(dataset=dataset).first()
        expected = connection.portal_id if connection else ""
    crm = getattr(client, "crm", "HubSpot")
    if not expected:
        raise MergeNotAllowed(
            f"dataset {dataset.name} has no {crm} portal id: set it (admin, Datasets) "
            "so merges go to the portal it syncs"
        )
    check = getattr(client, "check", None)
    if check is None:
        return
    try:
        portal = check().id
    except ConnectorError as error:
        raise MergeNotAllowed(f"cannot tell which {crm} portal the token opens: {error}") from None
    if portal != expected:
        raise MergeNotAllowed(
            f"the {crm} token opens portal {portal}, dataset {dataset.name} syncs portal "
            f"{expected}: nothing sent"
        )


def _selected(run: ReviewRun, fingerprints: Iterable[str] | None) -> list[Merge]:
    merges = plan_for_run(run).merges
    if fingerprints is None:
        return merges
    wanted = set(fingerprints)
    unknown = wanted - {m.fingerprint for m in merges}
    if unknown:
        raise MergeNotAllowed(f"not merges of run {run.pk}'s plan: {', '.join(sorted(unknown))}")
    return [m for m in merges if m.fingerprint in wanted]


def _recorded(dataset) -> dict[tuple[str, str], str]:
    rows = AppliedMerge.objects.filter(dataset=dataset).exclude(status=Status.FAILED)
    return {(r.object_type, r.merged_id): r.status for r in rows}


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


def configured_client(dataset: Dataset | None) -> Connector | None:
    """The connector of the dataset's connection (its token decrypted here), or None when
    the dataset has none (connect it: docs/connectors.md). Raises MergeNotAllowed when no
    connector serves the connection's provider."""
    connection = Connection.objects.filter(dataset=dataset).first() if dataset else None
    if connection is None:
        return None
    try:
        return registry.connector_for(connection)
    except registry.UnknownProvider as error:
        raise MergeNotAllowed(str(error)) from None
