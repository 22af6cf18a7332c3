"""manage.py review FILE [FILE ...]: review a batch and print its JSON (docs/output.md) or
a text report.

The review is served like an upload (reviews.orchestration.serving.decide): from the cache when
this content was reviewed under the same configuration, by failback when the daily token
budget is spent. The CLI has no client address, so it is never rate limited.

Exit codes: EXIT_CODES, shown by --help (docs/output.md has the same table, checked by
tests/orchestration/test_cli_help.py)."""

from __future__ import annotations

import time
from argparse import RawDescriptionHelpFormatter
from datetime import UTC, datetime
from pathlib import Path
from textwrap import fill

from django.core.management.base import BaseCommand, CommandError, DjangoHelpFormatter
from django.utils.dateparse import parse_datetime

from reviews.cli import (
    EXIT_BAD_INPUT,
    EXIT_CODES,
    EXIT_NOT_REVIEWED,
    bad_input,
    report_and_exit,
    run_in_process,
)
from reviews.engine.ingest import IngestError, UploadedFile
from reviews.models import ReviewRun
from reviews.orchestration.intake.serve import ServeRefused
from reviews.orchestration.intake.submit import DatabaseUnavailable, UploadTooLarge, submit
from revreview.store import StoreUnavailable
from workspaces.cli import HELP as workspace_help
from workspaces.cli import workspace_named

# The as-of time's sources in order (docs/input.md, The as-of time; README).
AS_OF_HELP = (
    "ISO date or date-time every date rule counts from (a date is its midnight UTC; a time "
    "without a zone is UTC). Without it: a JSON batch's exportedAt, else a CSV, XLSX or CRM "
    "API export's newest Last Modified Date (a Salesforce export's LastModifiedDate or "
    "SystemModstamp, of any object), else the upload time."
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
        "Review a CRM batch (a JSON batch, HubSpot CSV, XLSX or CRM API JSON exports, "
        "Salesforce's Data Export, Data Loader or report files, or a ZIP) and print the "
        "verdict."
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
            bad_input(self.stdout, self.stderr, format, [str(error)], batch=None)
        except ServeRefused as error:
            bad_input(self.stdout, self.stderr, format, [str(error)], batch=error.batch)
        except DatabaseUnavailable as error:  # the file is still on the caller's disk
            raise CommandError(
                f"the database is unavailable, nothing was stored ({error}); "
                "run the review again when it is back",
                returncode=EXIT_NOT_REVIEWED,
            ) from None
        except StoreUnavailable as error:  # as the database: nothing kept, no verdict
            raise CommandError(
                f"{error}; nothing was stored, run the review again when it is back",
                returncode=EXIT_NOT_REVIEWED,
            ) from None
        if not submission.accepted:
            bad_input(self.stdout, self.stderr, format, submission.errors, submission.batch)
        del uploads  # stored and parsed: the review needs neither copy of the bytes

        run = submission.run
        if not run.is_finished:  # else served from another run's review: nothing to run
            run = _wait(run, options["timeout"]) if options["worker"] else run_in_process(run)
        report_and_exit(self.stdout, run, format)


def _read(path: Path) -> UploadedFile:
    try:
        return UploadedFile(name=path.name, data=path.read_bytes())
    except OSError as error:
        raise CommandError(f"{path}: {error.strerror}", returncode=EXIT_BAD_INPUT) from None


def _parse_as_of(value: str | None) -> datetime | None:
    if not value:
        return None
    reason = ""
    try:  # Django's parser raises on a well-formed impossible date: 2026-13-45
        parsed = parse_datetime(value) or (
            parse_datetime(f"{value}T00:00:00") if len(value) == 10 else None
        )
    except ValueError as error:
        parsed, reason = None, f" ({error})"
    if parsed is None:
        raise CommandError(
            f"--as-of: not an ISO date or date-time: {value!r}{reason}",
            returncode=EXIT_BAD_INPUT,
        )
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    try:  # kept in UTC, as the API keeps it; 9999-12-31T23:00-05:00 is past year 9999
        return parsed.astimezone(UTC)
    except OverflowError:
        raise CommandError(
            f"--as-of: {value!r} is past the dates revreview can count with (years 1 to 9999 UTC)",
            returncode=EXIT_BAD_INPUT,
        ) from None


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
