"""Findings as CSV, for the run page's download and the admin's export action."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator

from django.db.models import QuerySet
from django.http import StreamingHttpResponse

from reviews.engine.batch import DEFAULT_CURRENCY
from reviews.models import Finding, ReviewRun, findings_of

CSV_COLUMNS = tuple(
    "position severity category kind title detail record_ids suggested_fix confidence "
    "amount_at_risk currency source fingerprint status first_seen owners record_sources".split()
)


def findings_csv_response(
    findings: QuerySet[Finding] | Iterable[Finding], filename: str, *, with_run: bool = False
) -> StreamingHttpResponse:
    """Streamed, so a run with 100k findings never sits in memory as one string."""
    if isinstance(findings, QuerySet):
        findings = findings.iterator(chunk_size=2000)
    return StreamingHttpResponse(
        findings_csv_lines(findings, with_run=with_run),
        content_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


class _Echo:
    def write(self, value: str) -> str:
        return value


def findings_csv_lines(findings: Iterable[Finding], *, with_run: bool = False) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow((("run",) if with_run else ()) + CSV_COLUMNS)
    for f in findings:
        row = [
            f.position + 1,  # stored from 0; people count from 1
            f.severity,
            f.category,
            f.kind,
            _cell(f.title),
            _cell(f.detail),
            _cell(";".join(f.record_ids)),
            _cell(f.suggested_fix),
            f.confidence,
            "" if f.amount_at_risk is None else f.amount_at_risk,
            f.currency or ("" if f.amount_at_risk is None else DEFAULT_CURRENCY),
            f.source,
            f.fingerprint,
            f.status,
            f.first_seen.isoformat() if f.first_seen else "",
            _cell(";".join(f.owners or ())),
            _cell(";".join(f.record_sources or ())),
        ]
        yield writer.writerow(([f.run_id] if with_run else []) + row)


def findings_of_runs(runs: Iterable[ReviewRun]) -> Iterator[Finding]:
    """The findings each run shows (findings_of), in order, each under the run asked
    about: a cached run's rows belong to the run it reuses, but its CSV names it."""
    for run in runs:
        for finding in findings_of(run).order_by("position").iterator(chunk_size=2000):
            finding.run_id = run.pk
            yield finding


def safe_cell(text: str) -> str:
    # Spreadsheets run a cell starting with = + - @ as a formula, and record data is
    # untrusted: such text gets a leading apostrophe (OWASP "CSV injection").
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


_cell = safe_cell
