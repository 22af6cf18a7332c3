"""Sending a run's to-do list to the owners, as tasks in the CRM (docs/output.md#tasks-
for-the-owners), when a staff member approves it: never by a model, never on a schedule.

Each task of the fix plan (one finding on one record, fix first) becomes one CRM task on
that record: the finding as its subject and notes, the record's owner when the CRM knows
them by id, a due date HUBSPOT_TASK_DUE_DAYS away, a priority from the severity. As with
merges (connectors/merges.py), each is recorded as a SentTask row before it is sent,
claimed with a conditional UPDATE (pending -> sending), and answered (created / failed /
unknown). A finding is sent once per dataset, whatever is approved again: its
fingerprint stays the same from sync to sync, so the next sync's run does not send it
twice either, and a task whose finding a later sync no longer has says so."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from connectors.base import Connector, ConnectorError, CrmTask
from connectors.models import SentTask
from connectors.write_access import same_portal, staff_dataset
from reviews.engine.fixes.fixtasks import Task
from reviews.models import Finding, ReviewRun
from reviews.orchestration.fixes.fixplan import plan_for_run
from reviews.reports.fixplan_export import for_owner

logger = logging.getLogger(__name__)
Status = SentTask.Status
_SALESFORCE_USER = re.compile(r"005[0-9A-Za-z]{12}(?:[0-9A-Za-z]{3})?")
PRIORITY = {"critical": "HIGH", "warning": "MEDIUM", "suggestion": "LOW"}


@dataclass(frozen=True, slots=True)
class TaskStep:
    """One task of the plan and where it stands: "would create", "resolved" (a later
    sync no longer has its finding: not sent), or a SentTask status."""

    task: Task
    outcome: str
    task_id: str = ""
    detail: str = ""
    resolved_in: int | None = None  # the later sync's run that no longer has the finding


def dry_run(run: ReviewRun, owner: str | None = None, *, user) -> list[TaskStep]:
    """What send_tasks would send (`owner`: one owner's tasks; "" the unowned ones), with
    what is already sent; writes nothing."""
    dataset = staff_dataset(run, user)
    sent = {row.fingerprint: row for row in _standing_rows(dataset)}
    gone = _resolved_since(run)
    steps = []
    for task in _tasks(run, owner):
        row, resolved_in = sent.get(task.fingerprint), gone.get(task.fingerprint)
        if row is not None:
            steps.append(_step(task, row, resolved_in=resolved_in))
        elif resolved_in is not None:
            steps.append(TaskStep(task, "resolved", resolved_in=resolved_in))
        else:
            steps.append(TaskStep(task, "would create"))
    return steps


def send_tasks(
    run: ReviewRun, owner: str | None = None, *, user, client: Connector
) -> list[TaskStep]:
    """Send the run's to-do list (or one owner's part of it) to the CRM, each finding at
    most once per dataset, and record every answer."""
    dataset = staff_dataset(run, user)
    same_portal(dataset, client)
    due = timezone.now() + timedelta(days=settings.HUBSPOT_TASK_DUE_DAYS)
    gone = _resolved_since(run)
    done = []
    for task in _tasks(run, owner):
        if task.fingerprint in gone:  # a later sync no longer has it: nothing to do
            done.append(TaskStep(task, "resolved", resolved_in=gone[task.fingerprint]))
            continue
        crm = crm_task(run, task, due)
        row = _record(dataset, run, task, crm, user)
        if row.status != Status.PENDING or not _claim(row):
            done.append(_step(task, row, detail="already sent: not sent again"))
            continue
        # Sent after the claim is committed and outside any transaction, as a merge is.
        done.append(_send(row, task, crm, client))
    return done


def crm_task(run: ReviewRun, task: Task, due) -> CrmTask:
    link = f"{settings.SITE_URL.rstrip('/')}/runs/{run.pk}/fix-plan/"
    owner_line = "" if _owner_id(task.owner) else f"Owner in the export: {task.owner}\n"
    body = (
        f"{task.problem}\n\nFix: {task.fix or 'see the finding'}\n"
        + (f"Property: {task.property}\n" if task.property else "")
        + owner_line
        + f"Found by revreview, run #{run.pk} ({link}); finding {task.fingerprint}."
    )
    return CrmTask(
        object_type=task.object,
        record_id=task.merged_into or task.record_id,
        subject=f"Fix: {task.problem}",
        body=body,
        owner_id=_owner_id(task.owner),
        due=due,
        priority=PRIORITY.get(task.severity, "MEDIUM"),
        owner_name="" if _owner_id(task.owner) else (task.owner or ""),
    )


def _owner_id(owner: str | None) -> str | None:
    """The CRM's owner id, when the record names its owner by id (an API pull's
    hubspot_owner_id, a Salesforce User's 15- or 18-character id); an export's owner name
    cannot assign a task and is written in it."""
    if owner and (owner.isdigit() or _SALESFORCE_USER.fullmatch(owner)):
        return owner
    return None


def _tasks(run: ReviewRun, owner: str | None) -> list[Task]:
    return [t for t in for_owner(plan_for_run(run), owner).tasks if t.fingerprint]


def _standing_rows(dataset) -> Iterable[SentTask]:
    return SentTask.objects.filter(dataset=dataset).exclude(status=Status.FAILED)


def _resolved_since(run: ReviewRun) -> dict[str, int]:
    """Fingerprints of this run's findings that the dataset's latest finished sync no
    longer has, with that sync's run."""
    latest = (
        ReviewRun.objects.filter(batch__dataset_id=run.batch.dataset_id, status="done")
        .order_by("-as_of", "-pk")
        .first()
    )
    if latest is None or latest.pk == run.pk:
        return {}
    mine = set(Finding.objects.filter(run=run).values_list("fingerprint", flat=True))
    still = set(Finding.objects.filter(run=latest).values_list("fingerprint", flat=True))
    return dict.fromkeys(mine - still, latest.pk)


def _record(dataset, run: ReviewRun, task: Task, crm: CrmTask, user) -> SentTask:
    """The row that holds this finding's task: a new pending one, or the standing one.
    Its record and subject are the task's as it will be sent."""
    try:
        with transaction.atomic():
            return SentTask.objects.create(
                dataset=dataset,
                run=run,
                fingerprint=task.fingerprint,
                object_type=crm.object_type,
                record_id=crm.record_id,
                owner=task.owner or "",
                subject=crm.subject[: SentTask._meta.get_field("subject").max_length],
                requested_by=user,
            )
    except IntegrityError:  # created, on its way or unanswered already (the constraint)
        return _standing_rows(dataset).get(fingerprint=task.fingerprint)


def _claim(row: SentTask) -> bool:
    """pending -> sending, for exactly one caller."""
    return (
        SentTask.objects.filter(pk=row.pk, status=Status.PENDING).update(status=Status.SENDING) == 1
    )


def _send(row: SentTask, task: Task, crm: CrmTask, client: Connector) -> TaskStep:
    try:
        answer = {"status": Status.CREATED, "http_status": 201, "task_id": client.create_task(crm)}
    except ConnectorError as error:
        refused = error.status is not None and error.status < 500
        answer = {
            "status": Status.FAILED if refused else Status.UNKNOWN,
            "http_status": error.status,
            "error": str(error)[:2000],
        }
    logger.info("task for %s on %s %s: %s", row.fingerprint, row.object_type, row.record_id,
                answer["status"])  # fmt: skip
    SentTask.objects.filter(pk=row.pk, status=Status.SENDING).update(
        answered_at=timezone.now(), **answer
    )
    row.refresh_from_db()
    return _step(task, row)


def _step(task: Task, row: SentTask, *, detail: str = "", resolved_in=None) -> TaskStep:
    return TaskStep(task, row.status, row.task_id, detail or row.error, resolved_in)
