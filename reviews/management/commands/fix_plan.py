"""manage.py fix_plan --run ID [--kind merges|tasks|salesforce-merges] [--format csv|json]
[--owner NAME]: a finished run's merge plan and owners' to-do list (docs/output.md), the
same as the run page's downloads and GET /api/v1/runs/{id}/fix-plan.

JSON: {"merges": [{"object", "primary", "merge", "reason", "fingerprint", ...}],
"tasks": [{"object", "record_id", "owner", "property", "problem", "amount", "currency",
"url", ...}]}. CSV (needs --kind): one row per merge or task, HubSpot's Record ID first;
salesforce-merges (CSV only): a master id, then one or two ids to merge into it.

Exit codes: 0 printed, 2 bad input (no such run), 3 no plan (the run is not done)."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from reviews.models import ReviewRun
from reviews.orchestration.fixes.fixplan import PlanUnavailable, plan_for_run
from reviews.reports.fixplan_export import (
    CSV_KINDS,
    SALESFORCE_MERGES,
    csv_lines,
    for_owner,
    plan_document,
)

EXIT_BAD_INPUT = 2
EXIT_NO_PLAN = 3


class Command(BaseCommand):
    help = "Print a run's merge plan and owners' to-do list (JSON or CSV)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--run", type=int, required=True, help="the run's id")
        parser.add_argument(
            "--kind", choices=CSV_KINDS, help="only the merges, only the tasks (or, CSV only, "
            "the merges as Salesforce's merge takes them)"
        )  # fmt: skip
        parser.add_argument("--format", choices=("json", "csv"), default="json")
        parser.add_argument("--owner", help='only this owner\'s tasks ("" for the unowned)')

    def handle(  # noqa: A002 - format is the option's name
        self, *args, run: int, kind: str | None, format: str, owner: str | None, **options
    ) -> None:
        found = ReviewRun.objects.select_related("batch__dataset").filter(pk=run).first()
        if found is None:
            raise CommandError(f"no run {run}", returncode=EXIT_BAD_INPUT)
        if format == "csv" and kind is None:
            raise CommandError(
                "--format csv needs --kind merges or --kind tasks", returncode=EXIT_BAD_INPUT
            )
        if format == "json" and kind == SALESFORCE_MERGES:
            raise CommandError(
                "--kind salesforce-merges is a CSV: add --format csv", returncode=EXIT_BAD_INPUT
            )
        try:
            plan = for_owner(plan_for_run(found), owner)
        except PlanUnavailable as error:
            raise CommandError(str(error), returncode=EXIT_NO_PLAN) from None
        if format == "csv":
            for line in csv_lines(plan, kind):
                self.stdout.write(line, ending="")
            return
        self.stdout.write(json.dumps(plan_document(plan, kind), ensure_ascii=False, indent=2))
