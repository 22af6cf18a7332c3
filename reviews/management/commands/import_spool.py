"""manage.py import_spool: import the uploads kept on disk while the database was down
(reviews.orchestration.intake.spool_import); the sweep does the same every
SWEEP_INTERVAL_SECONDS. Exits 1 if an upload could not be imported (it stays in the
spool with the reason) or the database is still unavailable."""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand

from reviews.orchestration.intake.spool_import import import_spool


class Command(BaseCommand):
    help = "Import the uploads spooled while the database was unavailable."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--retry-failed",
            action="store_true",
            help="also try the uploads whose import failed before",
        )

    def handle(self, *args, retry_failed: bool, **options) -> None:
        report = import_spool(retry_failed=retry_failed)
        for spool_id, batch_id in report.imported:
            self.stdout.write(f"{spool_id}: imported as batch {batch_id}")
        for spool_id, reason in report.failed:
            self.stderr.write(f"{spool_id}: not imported: {reason}")
        for spool_id in report.waiting:
            self.stderr.write(f"{spool_id}: waiting (the database is unavailable)")
        self.stdout.write(
            f"{len(report.imported)} imported, {len(report.failed)} failed, "
            f"{len(report.waiting)} waiting"
        )
        if report.failed or report.waiting:
            sys.exit(1)
