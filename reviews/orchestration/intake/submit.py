"""From uploaded files to a served review: store first, then parse, then decide how to
serve it (reviews.orchestration.serving.decide) and make its run.

Used by the dashboard, the CLI and (later) the API, so every entry point creates the
same rows. Nothing is lost: the bytes are committed before parsing starts, and a
refused request keeps its accepted batch."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from datetime import datetime

from celery import current_app
from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, transaction
from django.utils import timezone

from alerts.tasks import run_finished
from reviews.engine import batch as plain
from reviews.engine.coverage import missing_columns
from reviews.engine.ingest import IngestError, UploadedFile
from reviews.engine.ingest.json_batch import dataset_name_problem
from reviews.engine.risk import classify_risk
from reviews.engine.specialists import NAMES
from reviews.engine.storable import storable
from reviews.models import AgentRun, Batch, Dataset, ReviewRun, Verdict
from reviews.orchestration.dataset import baselines, policies
from reviews.orchestration.dataset.pipelines import learn_pipelines
from reviews.orchestration.run.tasks import ACCEPT_UPLOAD, send_start
from reviews.orchestration.serving import decide as serving
from reviews.orchestration.store.blob_store import Source, copy_into
from reviews.orchestration.store.parsed import keep_parsed, parse, parse_stored, stored_files
from reviews.orchestration.store.unread import unread

logger = logging.getLogger(__name__)


# AgentRun.model of a run served from another run's review: no detector or model ran.
REUSED_MODEL = "cached"


class UploadTooLarge(Exception):
    pass


class DatabaseUnavailable(Exception):
    """The upload could not be stored: the database is unreachable. Nothing of it is in
    the database; the web keeps it in the spool (reviews.orchestration.store.spool)."""

    @classmethod
    def of(cls, error: Exception) -> DatabaseUnavailable:
        """From the driver's error (one of unreachable_errors()), its text made safe."""
        return cls(f"{type(error).__name__}: {storable(str(error))}")


class StoredNotRead(Exception):
    """The upload is stored (`batch`), but the database went away before it was read:
    a worker reads and serves it once the database is back (intake_tasks.accept_upload,
    retried; the sweep sends it again if that message is lost). Answer with the batch,
    never "try again": a second upload would be reviewed twice."""

    def __init__(self, batch: Batch, error: Exception) -> None:
        super().__init__(f"batch {batch.pk} stored; reading it waits for the database ({error})")
        self.batch = batch


class ServeRefused(Exception):
    """The request is refused (its client is far over the rate limit): answer HTTP 429
    with Retry-After, or exit 2 in the CLI. The batch is kept, accepted; no run is made."""

    def __init__(self, reason: str, retry_after: int, *, batch: Batch | None = None) -> None:
        super().__init__(f"{reason}; retry after {retry_after} s")
        self.reason = reason
        self.retry_after = retry_after  # seconds
        self.batch = batch


@dataclass(slots=True)
class Submission:
    batch: Batch
    run: ReviewRun | None = None
    errors: list[str] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return self.run is not None


def submit(
    files: list[UploadedFile],
    *,
    created_by=None,
    as_of: datetime | None = None,
    dispatch: bool = True,
    rate_keys: list[str] | None = None,
    no_cache: bool = False,
    dataset: str | None = None,
    workspace=None,
) -> Submission:
    """Store, parse and (if valid) serve a review: a finished run that reuses another
    run's review, or a queued one. `dispatch=False` leaves a queued run for the caller to
    execute (the CLI runs it in-process). `rate_keys` are None where no rate limit
    applies (the CLI). `dataset` (the form's field, the CLI's --dataset) wins over the
    batch's own "dataset" key. `workspace` is where the batch (and its dataset) belong:
    every request names it; None is the default workspace (tests, a one-team CLI).
    Raises ServeRefused."""
    batch = store_upload(files, created_by=created_by, workspace=workspace)
    try:
        return review_stored(
            batch,
            files=files,
            created_by=created_by,
            as_of=as_of,
            dispatch=dispatch,
            rate_keys=rate_keys,
            no_cache=no_cache,
            dataset=dataset,
        )
    except unreachable_errors() as error:  # stored, then the database went away
        read_later(batch, as_of=as_of, rate_keys=rate_keys, dataset=dataset)
        raise StoredNotRead(batch, error) from error


def read_later(
    batch: Batch, *, as_of: datetime | None, rate_keys: list[str] | None, dataset: str | None
) -> None:
    """Send a stored batch to a worker to read and serve, by name (the task's module
    imports this one). The broker may be down too: the sweep finds the batch unread."""
    kwargs = {
        "batch_id": batch.pk,
        "as_of": as_of.isoformat() if as_of else None,
        "rate_keys": rate_keys,
        "dataset": dataset,
    }
    try:
        current_app.send_task(ACCEPT_UPLOAD, kwargs=kwargs)
    except Exception as error:  # the sweep sends it again (sweep.unread_batches)
        logger.warning("batch %s: not sent to a worker (%r); the sweep will", batch.pk, error)


def review_stored(
    batch: Batch,
    *,
    files: list[UploadedFile] | None = None,
    created_by=None,
    as_of: datetime | None = None,
    dispatch: bool = True,
    rate_keys: list[str] | None = None,
    no_cache: bool = False,
    dataset: str | None = None,
) -> Submission:
    """submit() after the store: parse the stored batch (or `files`, its bytes still in
    memory) and serve it. A worker calls this for an upload too big to parse in the web
    process (intake_tasks.accept_upload). Raises ServeRefused."""
    try:
        parsed = accept(batch, as_of=as_of, files=files, dataset=dataset)
    except IngestError as error:
        return Submission(batch=batch, errors=error.errors)
    run = serve(batch, parsed, created_by=created_by, rate_keys=rate_keys, no_cache=no_cache)
    if run.status == ReviewRun.Status.QUEUED:
        if dispatch:
            dispatch_review(run)
        else:  # the caller reviews it in this process: spare its tasks a second parse
            keep_parsed(batch.pk, parsed, batch.content_key)
    return Submission(batch=batch, run=run)


def serve(
    batch: Batch,
    parsed: plain.Batch,
    *,
    created_by=None,
    rate_keys: list[str] | None = None,
    no_cache: bool = False,
) -> ReviewRun:
    """Make the run decide_serve asks for: a copy of a finished review (cached, or
    failback with a last good run) or a queued run (fresh, or failback reviewed by the
    detectors alone). Raises ServeRefused when the request is refused."""
    baseline = baselines.choose_baseline(batch)
    policy_version, _ = policies.current(batch.dataset)
    fingerprint = baselines.serving_key(
        serving.config_fingerprint(), batch, baseline, policy_version
    )
    risk = classify_risk(parsed, policies.rules_of(policy_version))
    decision = serving.decide_serve(
        batch.content_key,
        fingerprint,
        rate_keys,
        no_cache=no_cache,
        workspace_id=batch.workspace_id,
        user_id=getattr(created_by, "pk", None) or batch.created_by_id,  # per-user budget
        expected_calls=risk.specialist_count + 1,  # the staffed specialists, the coordinator
    )
    if decision.is_error:
        raise ServeRefused(decision.reason, decision.retry_after or 1, batch=batch)
    mode = decision.mode
    if decision.reuse_run_id is not None:
        run = reuse_run(batch, decision, created_by=created_by)
        if run is not None:
            return run
        # The reused run was deleted since the decision: review the batch instead (a
        # failback one by the detectors alone). The runner's own budget reservations
        # still guard the spend of a fresh one.
        if mode == ReviewRun.Mode.CACHED:
            mode = ReviewRun.Mode.FRESH
    return create_run(
        batch,
        parsed,
        tier=risk.tier,
        created_by=created_by,
        mode=mode,
        reason=decision.reason,
        fingerprint=fingerprint,
        baseline=baseline,
        reserved_tokens=decision.reserved_tokens if mode == ReviewRun.Mode.FRESH else 0,
        policy_version=policy_version,
    )


def store_upload(files: list[UploadedFile | Source], *, created_by=None, workspace=None) -> Batch:
    """Keep the upload byte for byte, before anything reads it. `files` are in memory
    (UploadedFile) or read in chunks (Source: a big upload spooled to disk). Raises
    DatabaseUnavailable when the database cannot be reached (nothing was stored)."""
    if not files:
        raise IngestError(["no file uploaded"])
    sources = [as_source(f) for f in files]
    total = sum(s.size for s in sources)
    if total > settings.MAX_UPLOAD_BYTES:
        raise UploadTooLarge(
            f"upload is {total:,} bytes; the limit is {settings.MAX_UPLOAD_BYTES:,} bytes "
            "(MAX_UPLOAD_BYTES)"
        )
    names = [stored_name(s.name) for s in sources]
    try:
        with transaction.atomic():
            batch = Batch.objects.create(
                file_name=stored_name(", ".join(names)),
                sha256="",
                size_bytes=total,
                created_by=created_by,
                # A Workspace or its id; None: the model's default (the default workspace).
                **({"workspace_id": getattr(workspace, "pk", workspace)} if workspace else {}),
            )
            digests = copy_into(batch, list(zip(names, sources, strict=True)))
            batch.sha256 = _combined_sha256(digests)
            batch.save(update_fields=["sha256"])
    except unreachable_errors() as error:
        raise DatabaseUnavailable.of(error) from error
    return batch


def unreachable_errors() -> tuple[type[Exception], ...]:
    """The errors of a database that cannot be reached. Django wraps the driver's errors
    on execute and commit; the COPY in blob_store talks to psycopg directly, so its own
    classes are caught too."""
    driver = connection.Database
    return (OperationalError, InterfaceError, driver.OperationalError, driver.InterfaceError)


def as_source(file: UploadedFile | Source) -> Source:
    if isinstance(file, Source):
        return file
    return Source(name=file.name, size=len(file.data), chunks=lambda: (file.data,))


_NAME_CHARS = 500  # Batch.file_name and BatchFile.name


def stored_name(name: str) -> str:
    """A file name as it can be stored: NUL and lone surrogates (a non-UTF-8 name from
    the CLI) as their \\u escapes, and at most 500 characters, keeping the end, where
    the extension is."""
    name = storable(name)
    if len(name) <= _NAME_CHARS:
        return name
    return name[: _NAME_CHARS // 2 - 1] + "…" + name[-(_NAME_CHARS // 2) :]


def stored_sha256(files: list[UploadedFile]) -> str:
    """The sha256 a Batch of these files gets."""
    return _combined_sha256([hashlib.sha256(f.data).hexdigest() for f in files])


def _combined_sha256(digests: list[str]) -> str:
    # One file: its own hash. Several (a CSV export): a hash over the sorted file hashes.
    if len(digests) == 1:
        return digests[0]
    return hashlib.sha256("".join(sorted(digests)).encode()).hexdigest()


def accept(
    batch: Batch,
    *,
    as_of: datetime | None = None,
    files: list[UploadedFile] | None = None,
    dataset: str | None = None,
) -> plain.Batch:
    """Parse the stored files (or `files`, the same bytes still in memory, to spare a
    read back); mark the batch accepted (with counts and its as-of time) or rejected
    (with every error). Raises IngestError when rejected."""
    files = files if files is not None else stored_files(batch)
    try:
        parsed = parse(files, as_of=as_of, received_at=batch.created_at)
        name = dataset_name(dataset) or parsed.dataset
        if name:
            batch.dataset, _ = Dataset.objects.get_or_create(
                workspace_id=batch.workspace_id, name=name
            )
            learn_pipelines(batch, parsed)
    except IngestError as error:
        reject(batch, error.errors)
        raise
    except unreachable_errors():  # the database went away: read again once it is back
        raise
    except Exception as error:  # a bug or a memory error: still never left half-done
        reject(batch, [f"the upload could not be read ({type(error).__name__}); re-upload it"])
        raise
    batch.status = Batch.Status.ACCEPTED
    batch.external_id = (parsed.id or "")[:200]
    batch.source = (parsed.source or "")[:50]
    batch.as_of = parsed.as_of
    batch.as_of_source = parsed.as_of_source
    batch.partial = parsed.partial
    batch.ignored_columns = parsed.ignored_columns
    batch.missing_columns = missing_columns(parsed)
    batch.companies, batch.contacts, batch.deals = (
        len(parsed.companies),
        len(parsed.contacts),
        len(parsed.deals),
    )
    batch.stage_source = parsed.stage_source()
    batch.stage_sources = parsed.stage_sources()
    batch.content_key = serving.content_key(parsed)
    batch.save()
    return parsed


def dataset_name(name: str | None) -> str | None:
    """A dataset name given beside the upload, checked as the JSON key is; raises
    IngestError naming the problem."""
    if name is None or not name.strip():
        return None
    problem = dataset_name_problem(name)
    if problem:
        raise IngestError([f"dataset: {problem}"])
    return name.strip()


def accept_stored_upload(
    batch_id: int, *, as_of: str | None, rate_keys: list[str] | None, dataset: str | None = None
) -> Submission | None:
    """The worker's half of intake_tasks.accept_later. A refused request (far over the rate limit)
    leaves the batch accepted, with the reason among its errors. Reads a batch once: a
    second delivery (a retry, the sweep) waits on the first's row lock, then finds it
    read. Raises the database's error when it went away (the task retries)."""
    if not unread(batch_id):  # gone, or a redelivered task whose first run got there
        logger.info("batch %s is gone or already read", batch_id)
        return None
    try:
        with transaction.atomic():
            batch = Batch.objects.select_for_update().filter(pk=batch_id).first()
            if batch is None or not unread(batch_id):
                return None
            return review_stored(
                batch,
                created_by=batch.created_by,
                as_of=datetime.fromisoformat(as_of) if as_of else None,
                rate_keys=rate_keys,
                dataset=dataset,
            )
    except ServeRefused as error:
        Batch.objects.filter(pk=batch_id).update(errors=[f"refused: {error}"])
        return None


def reject(batch: Batch, errors: list[str]) -> None:
    """Mark a stored batch rejected, with why (a parse error, or a request refused
    before parsing: an invalid as-of time, an empty file)."""
    batch.status = Batch.Status.REJECTED
    batch.errors = [storable(error) for error in errors]
    batch.save(update_fields=["status", "errors"])
    logger.info("batch %s rejected: %d errors", batch.pk, len(errors))


def create_run(
    batch: Batch,
    parsed: plain.Batch,
    *,
    tier: str,
    created_by=None,
    mode: str = ReviewRun.Mode.FRESH,
    reason: str = "",
    fingerprint: str = "",
    baseline: ReviewRun | None = None,
    reserved_tokens: int = 0,
    policy_version=None,
) -> ReviewRun:
    """A queued run for the tasks. A failback run is reviewed by the detectors alone
    (serving.models_allowed)."""
    with transaction.atomic():
        run = ReviewRun.objects.create(
            batch=batch,
            mode=mode,
            reason=reason[:300],
            config_fingerprint=fingerprint,
            baseline_run=baseline,
            reserved_tokens=reserved_tokens,
            policy_version=policy_version,
            tier=tier,
            as_of=parsed.as_of,
            created_by=created_by,
        )
        AgentRun.objects.bulk_create(
            AgentRun(run=run, agent=name) for name in (*NAMES, AgentRun.COORDINATOR)
        )
    return run


def dispatch_review(run: ReviewRun) -> None:
    # On commit, so a worker never picks up a run it cannot see yet.
    transaction.on_commit(lambda: send_start(run.pk))


def rerun(run: ReviewRun, *, created_by=None, rate_keys: list[str] | None = None) -> ReviewRun:
    """A new review of a run's batch (the re-run button). It is an explicit request for
    a fresh review, so it skips the cache; like any request it counts against the rate
    limit and the budget, so it may be served by failback. Raises ServeRefused."""
    batch = run.batch
    dataset = batch.dataset
    if dataset is not None and (dataset.pipelines or []) != (batch.pipelines or []):
        # The dataset learned pipelines since: the new review reads the batch with them.
        batch.pipelines = dataset.pipelines or []
        batch.content_key = ""
    parsed = parse_stored(batch)
    if not batch.content_key:  # accepted before batches had one, or pipelines changed
        batch.content_key = serving.content_key(parsed)
        batch.stage_source = parsed.stage_source()
        batch.stage_sources = parsed.stage_sources()
        batch.save(update_fields=["content_key", "pipelines", "stage_source", "stage_sources"])
    new_run = serve(batch, parsed, created_by=created_by, rate_keys=rate_keys, no_cache=True)
    if new_run.status == ReviewRun.Status.QUEUED:
        dispatch_review(new_run)
    return new_run


# --- serving another run's review ----------------------------------------------------
# A cached or failback run references the reused run's findings (every reader goes
# through reviews.models.findings_of), so serving a 180k-finding review writes a handful
# of rows, not 180k. It gets its own copy of the verdict (one row, without any
# break-glass override). Its agent rows are done with model REUSED_MODEL: nothing ran
# for it, and its ledger is empty.


def reuse_run(
    batch: Batch, decision: serving.ServeDecision, *, created_by=None
) -> ReviewRun | None:
    """A finished run of `batch` serving the review of run `decision.reuse_run_id`, or
    None if that run is gone."""
    now = timezone.now()
    with transaction.atomic():
        source = (
            ReviewRun.objects.filter(pk=decision.reuse_run_id).select_related("verdict").first()
        )
        if source is None:
            return None
        run = ReviewRun.objects.create(
            batch=batch,
            mode=decision.mode,
            reason=decision.reason[:300],
            # Reused runs are fresh ones (serving._good_runs), never themselves reusing.
            reused_run=source,
            # The configuration the served findings were made under (for a cached run,
            # today's; for a failback run, possibly an older one).
            config_fingerprint=source.config_fingerprint,
            # ... and the dataset policy version they were made under.
            policy_version_id=source.policy_version_id,
            tier=source.tier,
            specialists=source.specialists,
            # A served run carries the statuses of the run it reuses (docs/history.md).
            baseline_run_id=source.baseline_run_id,
            resolved=source.resolved,
            suppressed=source.suppressed,
            standing=source.standing,
            status=ReviewRun.Status.DONE,
            as_of=batch.as_of or source.as_of,
            created_by=created_by,
            started_at=now,
            finished_at=now,
        )
        AgentRun.objects.bulk_create(
            AgentRun(
                run=run,
                agent=agent,
                status=AgentRun.Status.DONE,
                model=REUSED_MODEL,
                started_at=now,
                finished_at=now,
            )
            for agent in source.agents.values_list("agent", flat=True)
        )
        _copy_verdict(source, run)
    run_finished(run.pk)  # it is finished at once: alerts, after the commit
    return run


def _copy_verdict(source: ReviewRun, run: ReviewRun) -> None:
    verdict = getattr(source, "verdict", None)
    if verdict is None:
        return
    # Not the break-glass override: it was one person's call about that run.
    Verdict.objects.create(
        run=run,
        decision=verdict.decision,
        summary=verdict.summary,
        pipeline_at_risk=verdict.pipeline_at_risk,
        pipeline_by_currency=verdict.pipeline_by_currency,
    )
