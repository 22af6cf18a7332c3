"""manage.py spend [--days 30] [--format text|csv] [--workspace NAME]: model spend per UTC
day, next to the analyst baseline, then by model, by agent, by workspace and by user (the numbers
of the /spend/ page), of every workspace or of the one named. Days run
oldest first in both formats, as in the page's chart and CSV."""

from __future__ import annotations

import csv
from decimal import Decimal

from django.core.management.base import BaseCommand, CommandError

from ledger import reports
from workspaces.models import Workspace

COLUMNS = (
    # header, width, cell(spend)
    ("day", 10, lambda s: s.first_day.isoformat()),
    ("runs", 5, lambda s: str(s.runs)),
    ("fresh/cached/failback", 21, lambda s: "/".join(str(n) for n in s.runs_by_mode.values())),
    ("hits", 5, lambda s: _percent(s.cache_hit_rate)),
    ("input", 11, lambda s: str(s.usage.input_tokens)),
    ("cached", 10, lambda s: str(s.usage.cached_tokens)),
    ("output", 10, lambda s: str(s.usage.output_tokens)),
    ("model $", 12, lambda s: _usd(s.usage.usd)),
    ("median $/run", 12, lambda s: _usd(s.cost_per_run_median_usd)),
    ("p95 $/run", 12, lambda s: _usd(s.cost_per_run_p95_usd)),
    ("records", 8, lambda s: str(s.records)),
    ("analyst $", 10, lambda s: f"{s.analyst_usd:.2f}"),
    ("analyst/model", 13, lambda s: "-" if s.analyst_ratio is None else f"{s.analyst_ratio:.1f}x"),
)


def _usd(value: Decimal | None) -> str:
    return "-" if value is None else f"{value:.6f}"


def _percent(value: Decimal | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


class Command(BaseCommand):
    help = "Model spend per UTC day (tokens, dollars, runs by mode) beside the analyst baseline."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--days", type=int, default=30, help="UTC days up to today")
        parser.add_argument("--format", choices=("text", "csv"), default="text")
        parser.add_argument("--workspace", help="only this workspace (default: all, in total)")

    def handle(self, *args, days: int, format: str, **options) -> None:
        if days < 1:
            raise CommandError("--days must be at least 1")
        workspaces = None
        if options.get("workspace"):
            found = Workspace.objects.filter(name=options["workspace"]).first()
            if found is None:
                raise CommandError(f"no workspace {options['workspace']!r}")
            workspaces = [found.pk]
        report = reports.spend_report(days, workspaces=workspaces)
        if format == "csv":
            writer = csv.writer(self.stdout, lineterminator="\n")
            writer.writerow(reports.CSV_HEADER)
            writer.writerows(reports.csv_row(day) for day in report.days)
            return
        self.stdout.write(_row(header for header, _w, _c in COLUMNS))
        for day in report.days:
            self.stdout.write(_row(cell(day) for _h, _w, cell in COLUMNS))
        total = [cell(report.total) for _h, _w, cell in COLUMNS]
        total[0] = "total"
        self.stdout.write(_row(total))
        by = (
            ("model", report.by_model),
            ("agent", report.by_agent),
            ("workspace", report.by_workspace),
            ("user", report.by_user),
        )
        for title, rows in by:
            self.stdout.write("")
            self.stdout.write(
                f"{'by ' + title:<40} {'calls':>6} {'input':>11} {'cached':>10} "
                f"{'output':>10} {'model $':>12}"
            )
            for name, usage in rows:
                self.stdout.write(
                    f"{name:<40} {usage.calls:>6} {usage.input_tokens:>11} "
                    f"{usage.cached_tokens:>10} {usage.output_tokens:>10} {_usd(usage.usd):>12}"
                )
            if not rows:
                self.stdout.write("(no model calls)")


def _row(cells) -> str:
    texts = list(cells)
    first = f"{texts[0]:<{COLUMNS[0][1]}}"  # the day, left-aligned; numbers to the right
    rest = (
        f"{text:>{width}}" for (_h, width, _c), text in zip(COLUMNS[1:], texts[1:], strict=True)
    )
    return " ".join([first, *rest])
