"""Connecting a dataset to its CRM account, and pulling it: the rows around the
Django-free connector of its provider (connectors/registry.py, connectors/base.py).

A pull's snapshot is stored and reviewed exactly like an upload: one CRM API JSON file
(reviews/engine/ingest/api_json.py reads it) kept by store_upload (sha256, compressed),
reviewed by review_stored as a sync of the dataset, as of the pull's start. Nothing of
a pull reaches a batch until every answer is in: a pull that fails leaves no batch, and
its answers so far (PullChunk rows) for the retry to resume from."""

from __future__ import annotations

import json
import logging
import time
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Max, Q
from django.utils import timezone

from connectors import notify, registry, tokens
from connectors.base import (
    AccountUnknown,
    Connector,
    ConnectorError,
    CredentialsRefused,
    LimitReached,
    Pulled,
)
from connectors.models import Connection, Pull, PullChunk
from connectors.status import remember_calls_left
from reviews.engine.ingest import UploadedFile
from reviews.models import Dataset
from reviews.orchestration.dataset.pipelines import store_pipelines
from reviews.orchestration.intake.submit import Submission, review_stored, store_upload
from reviews.orchestration.store.parsed import stored_files

logger = logging.getLogger(__name__)


class ConnectRefused(Exception):
    """The CRM refused the token (its message), or the dataset cannot be connected."""


class AlreadyPulling(Exception):
    def __init__(self, pull: Pull) -> None:
        super().__init__(f"dataset {pull.connection.dataset.name} is being pulled (pull {pull.pk})")
        self.pull = pull


def connect(
    dataset: Dataset,
    token: str,
    *,
    provider: str = registry.DEFAULT_PROVIDER,
    every_hours: int | None = None,
    user=None,
) -> Connection:
    """Check the token with one call (the connector's check) and keep it, encrypted, with
    what the call said. Raises ConnectRefused with the CRM's message."""
    try:
        registry.check_provider(provider, where=f"connecting dataset {dataset.name}")
    except registry.UnknownProvider as error:
        raise ConnectRefused(str(error)) from None
    name = registry.label(provider)
    token = token.strip()
    if not token:
        raise ConnectRefused("no token given")
    every = every_hours or settings.HUBSPOT_PULL_EVERY_HOURS
    if every < 1:
        raise ConnectRefused("--every: at least 1 hour")
    # The call is outside any transaction: a slow CRM holds no database lock.
    try:
        connector = registry.connector_with(provider, token)
    except ConnectorError as error:  # credentials that are not even well formed
        raise ConnectRefused(error.message) from None
    try:
        account = connector.check()
    except AccountUnknown as error:
        raise ConnectRefused(error.message) from None
    except ConnectorError as error:
        # No status: the CRM did not answer, which is not a refusal of the credentials.
        said = "refused the token" if error.status is not None else "could not be reached"
        raise ConnectRefused(f"{name} {said}: {error.message}") from None
    finally:
        connector.close()
    values = {
        "provider": provider,
        "token_sealed": tokens.encrypt(token),
        "token_hint": registry.token_hint(provider, token),
        "portal_id": account.id,
        "company_currency": account.currency,
        "time_zone": account.time_zone,
        "account": account.details,
        "every_hours": every,
        "active": True,
        "next_pull_at": timezone.now(),
        "connected_by": user,
    }
    with transaction.atomic():
        before = Connection.objects.filter(dataset=dataset).values("provider", "portal_id").first()
        connection = Connection.objects.update_or_create(dataset=dataset, defaults=values)[0]
        if before and (before["provider"], before["portal_id"]) != (provider, account.id):
            connection.last_full_at = None  # another account: start with a full pull
            connection.save(update_fields=["last_full_at"])
        # The dataset's own field for this CRM's account id, where it has one (HubSpot:
        # hubspot_portal_id, read by fix-plan links and the merges' check).
        connector_class = registry.connector_class(provider)
        fields = {}
        if field := getattr(connector_class, "dataset_account_field", None):
            fields[field] = account.id
        if (field := getattr(connector_class, "dataset_url_field", None)) and account.url:
            fields[field] = account.url  # the org's address: Salesforce's record links
        if fields:
            Dataset.objects.filter(pk=dataset.pk).update(**fields)
    logger.info("dataset %s connected to %s account %s", dataset.name, name, account.id)
    return connection


def request_pull(connection: Connection, *, full: bool = False, by: str = "schedule") -> Pull:
    """A queued pull, or the failed one awaiting its retry put back in the queue (it
    resumes). Raises AlreadyPulling when one is queued or running."""
    waiting = connection.pulls.filter(status=Pull.Status.FAILED, progress__resumable=True).first()
    kind = Pull.Kind.FULL if full or connection.full_due() else Pull.Kind.INCREMENTAL
    try:
        with transaction.atomic():
            if waiting is not None and not (full and waiting.kind != Pull.Kind.FULL):
                Pull.objects.filter(pk=waiting.pk).update(status=Pull.Status.QUEUED)
                waiting.refresh_from_db()
                return waiting
            if waiting is not None:  # a full pull asked for: the resumable one is dropped
                _give_up(waiting)
            return Pull.objects.create(connection=connection, kind=kind, requested_by=by)
    except IntegrityError:
        open_pull = connection.pulls.filter(
            status__in=[Pull.Status.QUEUED, Pull.Status.RUNNING]
        ).first()
        raise AlreadyPulling(open_pull) from None


class DbCheckpoint:
    """A pull's answers as PullChunk rows, written with the progress after them in one
    transaction. Answers are held in memory and written while the connector waits on a
    rate limit (and at the end of each step), so the writes cost the pull no time of its
    own; a pull that stops loses at most the answers since its last wait."""

    def __init__(self, pull: Pull, connector: Connector) -> None:
        self.pull = pull
        self.connector = connector
        self.base_requests = pull.requests
        self.position = pull.chunks.aggregate(n=Max("position"))["n"] or 0
        self.pending: list[PullChunk] = []
        self.latest: tuple[str, dict] | None = None

    def chunks(self) -> list[tuple[str, object]]:
        return [(c.step, c.data) for c in self.pull.chunks.order_by("position")]

    def progress(self) -> dict:
        return self.pull.progress.get("checkpoint", {})

    def record(self, step: str, data: object, progress: dict) -> None:
        if data is not None:
            self.position += 1
            self.pending.append(
                PullChunk(pull=self.pull, position=self.position, step=step, data=data)
            )
        self.latest = (step, progress)
        if data is None:  # a step is done
            self.flush()

    def flush(self) -> None:
        if self.latest is None:
            return
        step, progress = self.latest
        with transaction.atomic():
            PullChunk.objects.bulk_create(self.pending)
            self.pull.progress = {**self.pull.progress, "checkpoint": progress}
            Pull.objects.filter(pk=self.pull.pk).update(
                progress=self.pull.progress,
                step=step,
                heartbeat_at=timezone.now(),
                requests=self.base_requests + self.connector.usage().requests,
            )
        self.pending, self.latest = [], None


def claim(pull_id: int) -> Pull | None:
    """Take a queued pull (or a running one whose worker went silent): None when someone
    else has it."""
    stale = timezone.now() - timedelta(minutes=settings.HUBSPOT_PULL_STALE_MINUTES)
    now = timezone.now()
    taken = (
        Pull.objects.filter(pk=pull_id)
        .filter(
            Q(status=Pull.Status.QUEUED) | Q(status=Pull.Status.RUNNING, heartbeat_at__lt=stale)
        )
        .update(status=Pull.Status.RUNNING, heartbeat_at=now)
    )
    if not taken:
        return None
    pull = Pull.objects.select_related("connection__dataset").get(pk=pull_id)
    if pull.started_at is None:
        Pull.objects.filter(pk=pull_id).update(started_at=now)
        pull.started_at = now
    return pull


def execute_pull(pull_id: int, *, dispatch: bool = True) -> tuple[Pull | None, Submission | None]:
    """Pull, store and review. `dispatch=False` leaves the run queued for the caller (the
    CLI reviews in its own process). Returns (the pull, the submission) or (None, None)
    when the pull was not this caller's to run."""
    pull = claim(pull_id)
    if pull is None:
        logger.info("pull %s is not queued, or someone else runs it", pull_id)
        return None, None
    connection = pull.connection
    Pull.objects.filter(pk=pull.pk).update(attempts=pull.attempts + 1)
    base = (pull.requests, pull.waited_seconds)  # of the attempts before this one
    previous, since = None, None
    if pull.kind == Pull.Kind.INCREMENTAL:
        previous, since = _last_snapshot(connection)
        if previous is None:  # nothing to build on: a full pull
            Pull.objects.filter(pk=pull.pk).update(kind=Pull.Kind.FULL)
            pull.kind = Pull.Kind.FULL
    connector = checkpoint = None
    try:
        connector = registry.connector_for(connection)
        checkpoint = DbCheckpoint(pull, connector)
        began = time.monotonic()
        result = connector.pull(checkpoint, previous=previous, since=since)
        base = (*base, time.monotonic() - began)
    except (ConnectorError, tokens.TokenUnreadable, registry.UnknownProvider) as error:
        if checkpoint is not None:
            checkpoint.flush()  # keep the answers that came before the failure
        _fail(pull, connector, error, base)
        return _reloaded(pull), None
    finally:
        if connector is not None:
            remember_calls_left(connection.pk, connector.usage())
            connector.close()
    return _finish(pull, connector, result, since, base, dispatch=dispatch)


def _finish(pull: Pull, connector: Connector, result: Pulled, since, base, *, dispatch: bool):
    connection = pull.connection
    stored = result.files or {
        registry.snapshot_file(connection.provider): json.dumps(
            result.document, separators=(",", ":")
        ).encode()
    }
    files = [UploadedFile(name=name, data=data) for name, data in stored.items()]
    # The dataset's workspace, not the default one: a pull is a sync of that dataset.
    batch = store_upload(files, workspace=connection.dataset.workspace_id)
    # Before the review: this sync's deal stages are read with the account's pipelines.
    remember_pipelines(connection, result)
    submission = review_stored(
        batch,
        files=files,
        as_of=pull.started_at,
        dataset=connection.dataset.name,
        dispatch=dispatch,
    )
    now = timezone.now()
    usage = connector.usage()
    with transaction.atomic():
        pull.chunks.all().delete()
        Pull.objects.filter(pk=pull.pk).update(
            status=Pull.Status.DONE if submission.accepted else Pull.Status.FAILED,
            error="" if submission.accepted else "; ".join(submission.errors)[:2000],
            finished_at=now,
            since=since,
            requests=base[0] + usage.requests,
            waited_seconds=base[1] + usage.waited_seconds,
            fetch_seconds=pull.fetch_seconds + base[2],
            in_flight_seconds=pull.in_flight_seconds + usage.in_flight_seconds,
            records=result.records,
            changed=result.changed,
            removed=result.removed,
            batch=batch,
            run=submission.run,
            progress={},
        )
        updates = {"next_pull_at": pull.started_at + timedelta(hours=connection.every_hours)}
        if pull.kind == Pull.Kind.FULL:
            updates["last_full_at"] = pull.started_at
        Connection.objects.filter(pk=connection.pk).update(**updates)
    size = sum(len(data) for data in stored.values())
    logger.info(
        "pull %s of %s: %d bytes, batch %s", pull.pk, connection.dataset.name, size, batch.pk
    )
    return _reloaded(pull), submission


def _fail(pull: Pull, connector: Connector | None, error: Exception, base: tuple) -> None:
    """Record why; keep the answers for a retry unless the token is the problem (a new
    token may be another account's), no connector serves the connection, or the retries
    are spent."""
    now = timezone.now()
    attempts = pull.attempts + 1
    final = CredentialsRefused | tokens.TokenUnreadable | registry.UnknownProvider
    retry = not isinstance(error, final) and attempts < settings.HUBSPOT_PULL_RETRY_LIMIT
    reason = str(error)
    if isinstance(error, CredentialsRefused):
        reason = (
            f"{pull.connection.provider_label} refused the token ({error.status}): "
            f"{error.message} — connect the dataset again"
        )
    elif isinstance(error, LimitReached):
        reason = f"rate limit: {error.message}"
    usage = connector.usage() if connector is not None else None
    pull.refresh_from_db()
    with transaction.atomic():
        if not retry:
            pull.chunks.all().delete()
        Pull.objects.filter(pk=pull.pk).update(
            status=Pull.Status.FAILED,
            error=reason[:2000],
            finished_at=now,
            requests=base[0] + (usage.requests if usage else 0),
            waited_seconds=base[1] + (usage.waited_seconds if usage else 0),
            progress={**pull.progress, "resumable": retry} if retry else {},
        )
        wait = timedelta(minutes=settings.HUBSPOT_PULL_RETRY_MINUTES)
        if not retry:
            wait = timedelta(hours=pull.connection.every_hours)
        Connection.objects.filter(pk=pull.connection_id).update(next_pull_at=now + wait)
    logger.warning("pull %s of %s failed: %s", pull.pk, pull.connection.dataset.name, reason)
    transaction.on_commit(lambda: notify.pull_failed(pull.pk), robust=True)


def _give_up(pull: Pull) -> None:
    pull.chunks.all().delete()
    Pull.objects.filter(pk=pull.pk).update(progress={})


def _reloaded(pull: Pull) -> Pull:
    return Pull.objects.select_related("connection__dataset", "run").get(pk=pull.pk)


def _last_snapshot(connection: Connection) -> tuple[dict | None, object]:
    """(the last good pull's document, the modified-since time of the next pull)."""
    last = (
        connection.pulls.filter(status=Pull.Status.DONE, batch__isnull=False)
        .order_by("-started_at")
        .first()
    )
    if last is None:
        return None, None
    names = registry.stored_files(connection.provider)
    kept = {f.name: f.data for f in stored_files(last.batch) if f.name in names}
    if set(kept) != set(names):
        return None, None
    since = last.started_at - timedelta(minutes=settings.HUBSPOT_PULL_OVERLAP_MINUTES)
    if names == (registry.snapshot_file(connection.provider),):
        return json.loads(kept[names[0]]), since
    return kept, since  # the connector's own files, by name


def remember_pipelines(connection: Connection, pulled: Pulled) -> None:
    """The account's deal pipelines (HubSpot: GET /crm/v3/pipelines/deals, as answered)
    become the dataset's, as an uploaded pipelines response would (docs/input.md). Ones
    that cannot be read are logged and left out: the sync is still reviewed, by the
    export's state columns and the default pipeline, and says so (batch.stage_source)."""
    dataset = connection.dataset
    if pulled.pipelines_problem:
        logger.warning(
            "dataset %s: %s's pipelines were not read: %s",
            dataset.pk,
            connection.provider_label,
            pulled.pipelines_problem,
        )
        return
    if pulled.pipelines:
        store_pipelines(dataset, pulled.pipelines, how="connector")
