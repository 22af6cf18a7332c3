"""Admin for findings: a fast list (no per-row queries, even with 100k findings),
searched by reviews.search; CSV export and dismissal as actions."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, StreamingHttpResponse
from django.utils.html import format_html
from django.utils.text import Truncator

from reviews.admin.dismissals import dismiss_findings
from reviews.engine.findings import MIXED
from reviews.engine.money import format_money
from reviews.models import Finding
from reviews.reports.exports import findings_csv_response
from reviews.search import search_findings
from workspaces.admin import WorkspaceScoped


@admin.register(Finding)
class FindingAdmin(WorkspaceScoped, admin.ModelAdmin):
    workspace_path = "run__batch__workspace"
    # The money before the long columns, so it is never behind a horizontal scroll.
    list_display = (
        "id",
        "run",
        "severity",
        "amount",
        "category",
        "kind",
        "short_title",
        "records",
    )
    list_filter = ("severity", "category", "source")
    search_fields = ("title",)  # shows the box; reviews.search does the work
    search_help_text = (
        "A company, person or deal name (titles name their records), a record id "
        "(dl_201), words of the title, a kind, or the batch's id or file name."
    )
    list_select_related = ("run",)
    # Newest first by primary key: the model's ("run", "position") order would sort 100k
    # rows through a join on every page.
    ordering = ("-id",)
    readonly_fields = [f.name for f in Finding._meta.fields]
    actions = ("export_findings_csv", "dismiss_selected")
    # No second COUNT(*) over the whole table when a filter is on: 100k rows add up.
    show_full_result_count = False

    def get_search_results(self, request: HttpRequest, queryset, search_term: str):
        return search_findings(queryset, search_term), False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    @admin.display(description="amount at risk", ordering="amount_at_risk")
    def amount(self, finding: Finding) -> str:
        """In its own currency, as the dashboard writes it ($410,000)."""
        if finding.amount_at_risk is None:
            return "several currencies" if finding.currency == MIXED else "–"
        return format_html(
            '<span class="nowrap">{}</span>',
            format_money(finding.amount_at_risk, finding.currency or None),
        )

    @admin.display(description="title", ordering="title")
    def short_title(self, finding: Finding) -> str:
        return format_html(
            '<span title="{}">{}</span>', finding.title, Truncator(finding.title).chars(110)
        )

    @admin.display(description="records")
    def records(self, finding: Finding) -> str:
        ids = finding.record_ids
        return ", ".join(ids[:5]) + (f" +{len(ids) - 5}" if len(ids) > 5 else "")

    dismiss_selected = admin.action(
        dismiss_findings, description="Dismiss selected findings for their dataset (with a reason)"
    )

    @admin.action(description="Export selected findings as CSV")
    def export_findings_csv(
        self, request: HttpRequest, queryset: QuerySet[Finding]
    ) -> StreamingHttpResponse:
        return findings_csv_response(
            queryset.order_by("run_id", "position"), "findings.csv", with_run=True
        )
