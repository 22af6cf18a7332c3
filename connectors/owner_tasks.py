"""A run's to-do list sent to HubSpot as tasks (docs/output.md#sending-the-to-do-list-
as-hubspot-tasks), when a staff member approves it or a filtered part of it (an owner,
some findings): never by a model, never on a schedule.

One HubSpot task per finding, on the record to fix (connectors/hubspot/tasks.py): the
subject is the problem, the body the fix, the property, the money at risk and the link;
the record's owner when it is a HubSpot owner id; due DUE_DAYS days after it is sent
(or the date asked). The same rules as merges (connectors/merges.py): a dry run first,
staff only, the portal the dataset syncs; each finding is recorded as a SentTask before
it is sent and claimed with a conditional UPDATE (pending -> sending), so a finding gets
one task whatever is run again (its fingerprint holds it); the create is sent once (no
answer: `unknown`, never resent); one HubSpot refused is `failed` with its message and
sent again only when named. A later sync that no longer has the finding says so beside
its task (`resolved`); revreview does not close the task in HubSpot."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.utils import timezone

from connectors.base import WriteRefused, WriteUnanswered
from connectors.merges import MergeNotAllowed, _checked, _same_portal
from reviews.engine.fixes.fixtasks import Task
from reviews.models import ReviewRun, SentTask
from reviews.orchestration.fixes.fixplan import plan_for_run
from reviews.reports.fixplan_export import for_owner

logger = logging.getLogger(__name__)
Status = SentTask.Status
DUE_DAYS = 7
SUBJECT_MAX = 250


@dataclass(frozen=True, slots=True)
class TaskStep:
    """One finding as a HubSpot task: what the dry run shows and what sending did."""

    fingerprint: str
    object_type: str
    record_id: str
    owner_id: str  # "" when the owner is not a HubSpot owner id: the task is unassigned
    subject: str
    due: date
    outcome: str  # "would create", "refused", or the row's status
    task_id: str = ""
    detail: str = ""
    resolved: str = ""  # "resolved by run N" once a later sync no longer has the finding


def request_of(task: Task, due: date) -> dict:
    """What is sent for one task (connectors/hubspot/tasks.py reads it)."""
    lines = [task.fix or task.problem]
    if task.property:
        lines.append(f"Property: {task.property}")
    if task.amount is not None:
        lines.append(f"Money at risk: {Decimal(task.amount):,.2f} {task.currency}".rstrip())
    if task.merged_into:
        lines.append(f"The merge plan merges this record into {task.merged_into}.")
    lines += [task.url, f"revreview finding {task.fingerprint} ({task.kind}, {task.severity})"]
    owner = (task.owner or "").strip()
    return {
        "object_type": task.object,
        "record_id": task.merged_into or task.record_id,
        "owner_id": owner if owner.isdigit() else "",
        "subject": task.problem[:SUBJECT_MAX],
        "body": "\n".join(line for line in lines if line),
        "due_ms": int(datetime.combine(due, time(12), tzinfo=UTC).timestamp() * 1000),
        "severity": task.severity,
    }


def dry_run_tasks(
    run: ReviewRun,
    fingerprints: Iterable[str] | None = None,
    *,
    owner: str | None = None,
    user,
    due: date | None = None,
) -> list[TaskStep]:
    """What send_tasks would send, with what is recorded already; writes nothing."""
    dataset = _checked(run, user)
    due = due or _default_due()
    recorded, refused = _recorded(dataset)
    resolved = _resolved(dataset, run)
    steps = []
    for task in _selected(run, fingerprints, owner):
        row = recorded.get(task.fingerprint)
        asked = request_of(task, due)
        if row is not None:
            steps.append(_step(task, asked, row.due, row.status, row, resolved=resolved))
        elif task.fingerprint in refused:
            steps.append(_step(task, asked, due, "refused", detail=refused[task.fingerprint]))
        else:
            steps.append(_step(task, asked, due, "would create"))
    return steps


def send_tasks(
    run: ReviewRun,
    fingerprints: Iterable[str] | None,
    *,
    owner: str | None = None,
    user,
    client,
    due: date | None = None,
) -> list[TaskStep]:
    """Create a HubSpot task for each selected finding of the run's to-do list (those of
    `fingerprints`, of `owner`, or all), each at most once, and record every answer."""
    dataset = _checked(run, user)
    tasks = _selected(run, fingerprints, owner)
    _same_portal(dataset, client)
    due = due or _default_due()
    recorded, refused = _recorded(dataset)
    done = []
    for task in tasks:
        asked = request_of(task, due)
        if (
            fingerprints is None
            and task.fingerprint in refused
            and task.fingerprint not in recorded
        ):
            done.append(_step(task, asked, due, "refused", detail=refused[task.fingerprint]))
            continue  # refused: sent again only when a person names it
        row = _record(dataset, run, asked, task.fingerprint, due, user)
        if row.status != Status.PENDING or not _claim(row):
            done.append(
                _step(task, asked, row.due, row.status, row, "already recorded: not sent again")
            )  # noqa: E501
            continue
        # Sent after the claim is committed, outside any transaction, once.
        done.append(_send(row, task, asked, client))
    return done


def _default_due() -> date:
    return timezone.localdate() + timedelta(days=DUE_DAYS)


def _selected(run: ReviewRun, fingerprints: Iterable[str] | None, owner: str | None) -> list[Task]:
    tasks = for_owner(plan_for_run(run), owner).tasks
    if fingerprints is None:
        return tasks
    wanted = set(fingerprints)
    unknown = wanted - {t.fingerprint for t in tasks}
    if unknown:
        raise MergeNotAllowed(
            f"not tasks of run {run.pk}'s to-do list: {', '.join(sorted(unknown))}"
        )  # noqa: E501
    return [t for t in tasks if t.fingerprint in wanted]


def _recorded(dataset) -> tuple[dict[str, SentTask], dict[str, str]]:
    """(the standing row of each finding, the last refusal of the others)."""
    rows = SentTask.objects.filter(dataset=dataset).order_by("requested_at", "id")
    standing = {r.fingerprint: r for r in rows if r.status != Status.FAILED}
    refused = {r.fingerprint: f"refused before: {r.error} (sent again only when named)"
               for r in rows if r.status == Status.FAILED}  # fmt: skip
    return standing, refused


def _resolved(dataset, run: ReviewRun) -> dict[str, str]:
    """Fingerprints a later finished sync of the dataset no longer has: the newest one."""
    latest = (
        ReviewRun.objects.filter(batch__dataset=dataset, status=ReviewRun.Status.DONE)
        .order_by("-created_at", "-id")
        .first()
    )
    if latest is None or latest.created_at <= run.created_at:
        return {}
    still = set(latest.findings.values_list("fingerprint", flat=True))
    sent = SentTask.objects.filter(dataset=dataset).values_list("fingerprint", flat=True)
    return {fp: f"resolved by run {latest.pk}" for fp in sent if fp not in still}


def _record(dataset, run, asked: dict, fingerprint: str, due: date, user) -> SentTask:
    try:
        with transaction.atomic():
            return SentTask.objects.create(
                dataset=dataset, run=run, fingerprint=fingerprint,
                object_type=asked["object_type"], record_id=asked["record_id"],
                owner_id=asked["owner_id"], subject=asked["subject"], body=asked["body"],
                due=due, requested_by=user,
            )  # fmt: skip
    except IntegrityError:  # a task of this finding is made, on its way or unanswered
        return (
            SentTask.objects.filter(dataset=dataset, fingerprint=fingerprint)
            .exclude(status=Status.FAILED)
            .get()
        )


def _claim(row: SentTask) -> bool:
    """pending -> sending, for exactly one caller."""
    return (
        SentTask.objects.filter(pk=row.pk, status=Status.PENDING).update(
            status=Status.SENDING, claimed_at=timezone.now()
        )
        == 1
    )


def _send(row: SentTask, task: Task, asked: dict, client) -> TaskStep:
    try:
        task_id, response = client.create_task(asked)
        answer = {"status": Status.CREATED, "task_id": task_id, "http_status": 201,
                  "response": response}  # fmt: skip
    except WriteRefused as error:
        answer = {"status": Status.FAILED, "http_status": error.status, "response": error.answer,
                  "error": str(error)}  # fmt: skip
    except WriteUnanswered as error:
        answer = {"status": Status.UNKNOWN, "http_status": error.status, "error": str(error)}
    logger.info("task %s on %s %s: %s", row.fingerprint, row.object_type, row.record_id,
                answer["status"])  # fmt: skip
    SentTask.objects.filter(pk=row.pk, status=Status.SENDING).update(
        answered_at=timezone.now(), **answer
    )
    row.refresh_from_db()
    return _step(task, asked, row.due, row.status, row, row.error)


def _step(
    task: Task, asked: dict, due: date, outcome: str, row: SentTask | None = None,
    detail: str = "", *, resolved: dict[str, str] | None = None,
) -> TaskStep:  # fmt: skip
    return TaskStep(
        task.fingerprint, asked["object_type"], asked["record_id"], asked["owner_id"],
        asked["subject"], due, outcome, row.task_id if row else "", detail,
        (resolved or {}).get(task.fingerprint, ""),
    )  # fmt: skip
