"""manage.py pipelines --dataset NAME [FILE]: store HubSpot's deal pipelines (FILE: the
`GET /crm/v3/pipelines/deals` response, as sent; "-" reads standard input) on a
dataset, created if new; later syncs of it read deal stages by them. Without FILE,
print the pipelines the dataset remembers, as JSON.

Exit codes: 0 done, 2 bad input (unreadable file, not a pipelines response, unknown
dataset)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from reviews.engine.ingest import IngestError
from reviews.models import Dataset
from reviews.orchestration.dataset.pipelines import store_pipelines_response
from workspaces.cli import HELP as workspace_help
from workspaces.cli import workspace_named

EXIT_BAD_INPUT = 2


class Command(BaseCommand):
    help = "Store HubSpot's deal pipelines on a dataset, or print the ones it has."

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", nargs="?", help="the pipelines API response (- for stdin)")
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--workspace", help=workspace_help)

    def handle(self, *args, file: str | None, dataset: str, **options) -> None:
        workspace = workspace_named(options.get("workspace"), returncode=EXIT_BAD_INPUT)
        if file is None:
            found = Dataset.objects.filter(workspace=workspace, name=dataset).first()
            if found is None:
                raise CommandError(f"no dataset named {dataset!r}", returncode=EXIT_BAD_INPUT)
            self.stdout.write(json.dumps(found.pipelines or [], indent=2, ensure_ascii=False))
            return
        try:
            data = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
        except OSError as error:
            raise CommandError(f"{file}: {error.strerror}", returncode=EXIT_BAD_INPUT) from None
        try:
            stored = store_pipelines_response(
                dataset, data, how="cli", workspace_id=workspace.pk, file_name=file
            )
        except IngestError as error:
            raise CommandError("; ".join(error.errors[:5]), returncode=EXIT_BAD_INPUT) from None
        count = len(stored.pipelines)
        stages = sum(len(p.get("stages", [])) for p in stored.pipelines)
        self.stdout.write(
            f"{stored.name}: {count} pipeline{'s' if count != 1 else ''}, "
            f"{stages} stage{'s' if stages != 1 else ''}"
        )
