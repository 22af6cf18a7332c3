"""What the commands that review a batch share (`manage.py review`, `manage.py
hubspot_pull`): the exit codes, a refused batch's output, the review run in this
process, and the report printed with the verdict's exit code (docs/output.md)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import chain
from typing import NoReturn

from reviews.engine.vocabulary import crm_of
from reviews.models import Batch, ReviewRun
from reviews.orchestration.store.parsed import forget_parsed
from reviews.reports.report import run_report, stream_report_json, text_report
from revreview.celery import app

EXIT_BAD_INPUT = 2
# No verdict: the run failed, (--worker) did not finish within --timeout, the database
# was unavailable, or (hubspot_pull) the pull failed.
EXIT_NOT_REVIEWED = 3
EXIT_CODES = {
    0: "approve or approve_with_comments",
    1: "request_changes (a partial run whose missing column switched off a rule that can "
    "be critical is one)",
    EXIT_BAD_INPUT: "bad input: the batch was rejected (every error is printed), a file "
    "could not be read, --as-of or --dataset is invalid, or the upload is over "
    "MAX_UPLOAD_BYTES",
    EXIT_NOT_REVIEWED: "no verdict: the run failed, --worker did not finish within "
    "--timeout, or the database or the store was unavailable (nothing stored)",
}


@contextmanager
def reader_may_leave() -> Iterator[None]:
    """`review ... | head` closes the pipe before the report ends: the reader has what it
    wanted. Stop writing, without a traceback; the exit code still says the verdict."""
    try:
        yield
    except BrokenPipeError:
        # Python flushes stdout once more at exit: let that go to /dev/null, or it prints
        # "Exception ignored ... BrokenPipeError" instead.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def bad_input(stdout, stderr, format: str, errors: list[str], batch: Batch | None) -> NoReturn:
    """A refused batch: with --format json its errors as JSON on stdout, always one
    `error:` line each on stderr; exit 2."""
    if format == "json":
        # As everywhere (docs/output.md), batch.id is our database id, where the
        # stored upload is kept (/batches/<id>/); external_id is the batch's own id
        # (unknown when parsing failed).
        stored = (
            {
                "id": batch.pk,
                "external_id": batch.external_id or None,
                "db_id": batch.pk,  # the same as id, kept for earlier readers
                "sha256": batch.sha256,
            }
            if batch
            else None
        )
        payload = {"batch": stored, "errors": errors}
        with reader_may_leave():
            stdout.write(json.dumps(payload, indent=2, ensure_ascii=False))
            stdout.flush()
    for error in errors:
        stderr.write(f"error: {error}")
    sys.exit(EXIT_BAD_INPUT)


def run_in_process(run: ReviewRun) -> ReviewRun:
    """The run reviewed by the same task code, executed eagerly here: no worker needed."""
    app.conf.task_always_eager = True
    from reviews.orchestration.run.tasks import start_review

    # A crash fails the run (logged, its error kept on the run); the report says so
    # and the exit code is EXIT_NOT_REVIEWED, instead of a traceback.
    start_review.apply(kwargs={"run_id": run.pk}, throw=False)
    run.refresh_from_db()
    return run


def write_chunks(stdout, chunks: Iterable[bytes]) -> None:
    """The JSON as bytes to a real stdout (no copy as text); as text to anything else
    (call_command's StringIO in tests)."""
    buffer = getattr(getattr(stdout, "_out", None), "buffer", None)
    if buffer is None:
        stdout.write(b"".join(chunks).decode(), ending="")
        return
    stdout.flush()
    for chunk in chunks:
        buffer.write(chunk)
    buffer.flush()


def report_and_exit(stdout, run: ReviewRun, format: str) -> NoReturn:
    """Print the finished run's report and exit by its verdict: 0 approve or approve
    with comments, 1 request changes, 3 no verdict (the run failed: the report says why)."""
    forget_parsed()  # the review is done: free the records before the report is built
    with reader_may_leave():
        if format == "json":
            # The bytes GET /runs/N.json serves, streamed: 180k findings are never held
            # whole, as dicts or as text.
            report = stream_report_json(run)
            try:
                write_chunks(stdout, chain(report, [b"\n"]))
            finally:
                report.close()  # a reader that left: end the findings' query now
        else:
            report = text_report(
                run_report(run), file_name=run.batch.file_name, crm=crm_of(run.batch.source)
            )
            stdout.write(report)
            stdout.flush()
    verdict = getattr(run, "verdict", None)
    if verdict is None:
        sys.exit(EXIT_NOT_REVIEWED)
    sys.exit(1 if verdict.effective_decision == "request_changes" else 0)
