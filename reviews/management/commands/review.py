"""manage.py review FILE [FILE ...]: review a batch and print its JSON (docs/output.md) or
a text report.

The review is served like an upload (reviews.orchestration.serving.decide): from the cache when
this content was reviewed under the same configuration, by failback when the daily token
budget is spent. The CLI has no client address, so it is never rate limited.

Exit codes: EXIT_CODES, shown by --help (docs/output.md has the same table, checked by
tests/orchestration/test_cli_help.py)."""

from __future__ import annotations

import json
import os
import sys
import time
from argparse import RawDescriptionHelpFormatter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from itertools import chain
from pathlib import Path
from textwrap import fill

from django.core.management.base import BaseCommand, CommandError, DjangoHelpFormatter
from django.utils.dateparse import parse_datetime

from reviews.engine.ingest import IngestError, UploadedFile
from reviews.models import ReviewRun
from reviews.orchestration.intake.submit import (
    DatabaseUnavailable,
    ServeRefused,
    UploadTooLarge,
    submit,
)
from reviews.orchestration.store.parsed import forget_parsed
from reviews.reports.report import run_report, stream_report_json, text_report
from revreview.celery import app
from workspaces.cli import HELP as workspace_help
from workspaces.cli import workspace_named

EXIT_BAD_INPUT = 2
# No verdict: the run failed, (--worker) did not finish within --timeout, or the
# database was unavailable.
EXIT_NOT_REVIEWED = 3
EXIT_CODES = {
    0: "approve or approve_with_comments",
    1: "request_changes",
    EXIT_BAD_INPUT: "bad input: the batch was rejected (every error is printed), a file "
    "could not be read, --as-of or --dataset is invalid, or the upload is over "
    "MAX_UPLOAD_BYTES",
    EXIT_NOT_REVIEWED: "no verdict: the run failed, --worker did not finish within "
    "--timeout, or the database was unavailable (nothing stored)",
}
# The as-of time's sources in order (docs/input.md, The as-of time; README).
AS_OF_HELP = (
    "ISO date or date-time every date rule counts from (a date is its midnight UTC; a time "
    "without a zone is UTC). Without it: a JSON batch's exportedAt, else a CSV, XLSX or CRM "
    "API export's newest Last Modified Date, else the upload time."
)


def _epilog() -> str:
    codes = [
        fill(meaning, 78, initial_indent=f"  {code}  ", subsequent_indent=" " * 5)
        for code, meaning in EXIT_CODES.items()
    ]
    quiet = "A reader that stops early (| head) ends the output quietly; the exit code still "
    return "\n".join(["exit codes:", *codes, fill(quiet + "says the verdict.", 78)])


class _HelpFormatter(DjangoHelpFormatter, RawDescriptionHelpFormatter):
    """Django's order of options, with the exit codes' lines kept as written."""


class Command(BaseCommand):
    help = (
        "Review a CRM batch (a JSON batch, HubSpot CSV, XLSX or CRM API JSON exports, or a "
        "ZIP) and print the verdict."
    )

    def create_parser(self, prog_name: str, subcommand: str, **kwargs):
        return super().create_parser(
            prog_name, subcommand, epilog=_epilog(), formatter_class=_HelpFormatter, **kwargs
        )

    def add_arguments(self, parser) -> None:
        parser.add_argument("files", nargs="+", type=Path)
        parser.add_argument("--format", choices=("json", "text"), default="text")
        parser.add_argument("--as-of", help=AS_OF_HELP)
        parser.add_argument(
            "--worker",
            action="store_true",
            help="send the review through the broker to a Celery worker and wait",
        )
        parser.add_argument("--timeout", type=float, default=600, help="seconds, with --worker")
        parser.add_argument(
            "--dataset",
            help='the dataset this batch is a sync of (wins over the batch\'s "dataset" '
            "key): it is reviewed against the dataset's previous sync",
        )
        parser.add_argument("--workspace", help=workspace_help)
        parser.add_argument(
            "--no-cache",
            action="store_true",
            help="review afresh even if this content was reviewed under the same configuration",
        )

    def handle(self, *args, files: list[Path], format: str, **options) -> None:
        as_of = _parse_as_of(options["as_of"])
        uploads = [_read(path) for path in files]
        try:
            submission = submit(
                uploads,
                as_of=as_of,
                dispatch=options["worker"],
                no_cache=options["no_cache"],
                dataset=options["dataset"],
                workspace=workspace_named(options.get("workspace"), returncode=EXIT_BAD_INPUT),
            )
        except (IngestError, UploadTooLarge) as error:
            self._bad_input(format, [str(error)], batch=None)
        except ServeRefused as error:
            self._bad_input(format, [str(error)], batch=error.batch)
        except DatabaseUnavailable as error:  # the file is still on the caller's disk
            raise CommandError(
                f"the database is unavailable, nothing was stored ({error}); "
                "run the review again when it is back",
                returncode=EXIT_NOT_REVIEWED,
            ) from None
        if not submission.accepted:
            self._bad_input(format, submission.errors, batch=submission.batch)
        del uploads  # stored and parsed: the review needs neither copy of the bytes

        run = submission.run
        if not run.is_finished:  # else served from another run's review: nothing to run
            run = _wait(run, options["timeout"]) if options["worker"] else _run_in_process(run)

        forget_parsed()  # the review is done: free the records before the report is built
        with reader_may_leave():
            if format == "json":
                # The bytes GET /runs/N.json serves, streamed: 180k findings are never held
                # whole, as dicts or as text.
                report = stream_report_json(run)
                try:
                    _write_chunks(self.stdout, chain(report, [b"\n"]))
                finally:
                    report.close()  # a reader that left: end the findings' query now
            else:
                self.stdout.write(text_report(run_report(run), file_name=run.batch.file_name))
                self.stdout.flush()
        verdict = getattr(run, "verdict", None)
        if verdict is None:  # the run failed: its error is in the report
            sys.exit(EXIT_NOT_REVIEWED)
        sys.exit(1 if verdict.effective_decision == "request_changes" else 0)

    def _bad_input(self, format: str, errors: list[str], batch) -> None:
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
                self.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False))
                self.stdout.flush()
        for error in errors:
            self.stderr.write(f"error: {error}")
        sys.exit(EXIT_BAD_INPUT)


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


def _write_chunks(stdout, chunks: Iterable[bytes]) -> None:
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


def _read(path: Path) -> UploadedFile:
    try:
        return UploadedFile(name=path.name, data=path.read_bytes())
    except OSError as error:
        raise CommandError(f"{path}: {error.strerror}", returncode=EXIT_BAD_INPUT) from None


def _parse_as_of(value: str | None) -> datetime | None:
    if not value:
        return None
    parsed = parse_datetime(value) or (
        parse_datetime(f"{value}T00:00:00") if len(value) == 10 else None
    )
    if parsed is None:
        raise CommandError(f"--as-of: not an ISO date-time: {value!r}", returncode=EXIT_BAD_INPUT)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _run_in_process(run: ReviewRun) -> ReviewRun:
    # The same task code, executed eagerly in this process: no worker needed.
    app.conf.task_always_eager = True
    from reviews.orchestration.run.tasks import start_review

    # A crash fails the run (logged, its error kept on the run); the report says so
    # and the exit code is EXIT_NOT_REVIEWED, instead of a traceback.
    start_review.apply(kwargs={"run_id": run.pk}, throw=False)
    run.refresh_from_db()
    return run


def _wait(run: ReviewRun, timeout: float) -> ReviewRun:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.is_finished:
            return run
        time.sleep(0.25)
    raise CommandError(
        f"run {run.pk} did not finish within {timeout:.0f} s", returncode=EXIT_NOT_REVIEWED
    )
