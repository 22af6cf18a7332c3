"""Admin for batches, runs and findings: read-only records, fast lists (no per-row
queries, even with 100k findings), re-run and CSV export as actions."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import Count, QuerySet
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest, StreamingHttpResponse
from django.urls import reverse
from django.utils.html import format_html

from reviews.models import AgentRun, Batch, BatchFile, Finding, ReviewRun, Verdict, findings_of
from reviews.orchestration.submit import rerun
from reviews.web.exports import findings_csv_response, findings_of_runs

FINDINGS_INLINE_LIMIT = 50


class ReadOnly:
    """What the factory recorded is evidence: shown, never edited by hand."""

    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


class ReadOnlyInline(ReadOnly, admin.TabularInline):
    pass


def _changelist(model: str, **filters: object) -> str:
    query = "&".join(f"{key}={value}" for key, value in filters.items())
    return f"{reverse(f'admin:{model}_changelist')}?{query}"


# --- batches ---------------------------------------------------------------------------


class BatchFileInline(ReadOnlyInline):
    model = BatchFile
    fields = ("name", "size_bytes", "sha256")  # not `data`: the bytes can be 200 MB
    readonly_fields = fields


@admin.register(Batch)
class BatchAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "file_name",
        "external_id",
        "status",
        "companies",
        "contacts",
        "deals",
        "runs_link",
        "created_by",
        "created_at",
    )
    list_filter = ("status", "source")
    search_fields = ("=id", "external_id", "file_name", "^sha256")
    list_select_related = ("created_by",)
    readonly_fields = [f.name for f in Batch._meta.fields]
    inlines = (BatchFileInline,)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Batch]:
        return super().get_queryset(request).annotate(run_count=Count("runs"))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # uploads go through the dashboard, which stores and parses them

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    @admin.display(description="runs", ordering="run_count")
    def runs_link(self, batch: Batch) -> str:
        if not batch.run_count:
            return "–"
        url = _changelist("reviews_reviewrun", batch__id__exact=batch.pk)
        return format_html('<a href="{}">{}</a>', url, batch.run_count)


# --- runs ------------------------------------------------------------------------------


class VerdictInline(ReadOnly, admin.StackedInline):
    model = Verdict
    fields = (
        "decision",
        "summary",
        "pipeline_at_risk",
        "overridden_by",
        "override_reason",
        "overridden_at",
        "created_at",
    )
    readonly_fields = fields


class AgentRunInline(ReadOnlyInline):
    model = AgentRun
    fields = ("agent", "status", "model", "started_at", "finished_at", "error")
    readonly_fields = fields


class FirstFindingsFormSet(BaseInlineFormSet):
    """Only the first findings: a run can have 100k. The rest are one link away."""

    def get_queryset(self) -> QuerySet[Finding]:
        # Sliced once and kept: the formset indexes this queryset once per form. The
        # findings the run shows: a cached run's are those of the run it reuses.
        if not hasattr(self, "_first_findings"):
            findings = findings_of(self.instance).order_by("position")
            self._first_findings = findings[:FINDINGS_INLINE_LIMIT]
        return self._first_findings


class FindingInline(ReadOnlyInline):
    model = Finding
    formset = FirstFindingsFormSet
    fields = ("position", "severity", "category", "kind", "title", "record_ids", "amount_at_risk")
    readonly_fields = fields
    show_change_link = True
    verbose_name_plural = f"findings (the first {FINDINGS_INLINE_LIMIT})"


@admin.register(ReviewRun)
class ReviewRunAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "batch",
        "mode",
        "tier",
        "status",
        "verdict_display",
        "degraded",
        "created_at",
    )
    list_filter = ("status", "mode", "tier", "degraded", "verdict__decision")
    search_fields = ("=batch__id", "batch__external_id", "batch__file_name", "^batch__sha256")
    list_select_related = ("batch", "verdict")
    readonly_fields = ["dashboard_link", "findings_link", *(f.name for f in ReviewRun._meta.fields)]
    inlines = (VerdictInline, AgentRunInline, FindingInline)
    actions = ("rerun_selected", "export_findings_csv")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False  # break glass is on the dashboard, where it is recorded with a reason

    @admin.display(description="verdict", ordering="verdict__decision")
    def verdict_display(self, run: ReviewRun) -> str:
        verdict = getattr(run, "verdict", None)
        if verdict is None:
            return "–"
        if verdict.is_overridden:
            return "approve (break glass)"
        return verdict.decision

    @admin.display(description="dashboard")
    def dashboard_link(self, run: ReviewRun) -> str:
        return format_html(
            '<a href="{}">open run #{}</a>', reverse("reviews:run", args=[run.pk]), run.pk
        )

    @admin.display(description="findings")
    def findings_link(self, run: ReviewRun) -> str:
        total = findings_of(run).count()
        url = _changelist("reviews_finding", run__id__exact=run.findings_run_id)
        shown = min(total, FINDINGS_INLINE_LIMIT)
        reused = (
            f" (those of run #{run.reused_run_id}, which this run reuses)"
            if run.reused_run_id
            else ""
        )
        return format_html(
            '{} in all{}; {} shown below. <a href="{}">All findings of this run</a>',
            total,
            reused,
            shown,
            url,
        )

    @admin.action(description="Re-run selected runs (fresh)")
    def rerun_selected(self, request: HttpRequest, queryset: QuerySet[ReviewRun]) -> None:
        new_runs = [rerun(run, created_by=request.user) for run in queryset.select_related("batch")]
        ids = ", ".join(f"#{run.pk}" for run in new_runs)
        self.message_user(request, f"Started {len(new_runs)} fresh runs: {ids}.", messages.SUCCESS)

    @admin.action(description="Export findings of selected runs as CSV")
    def export_findings_csv(
        self, request: HttpRequest, queryset: QuerySet[ReviewRun]
    ) -> StreamingHttpResponse:
        runs = queryset.order_by("pk")
        return findings_csv_response(findings_of_runs(runs), "findings.csv", with_run=True)


# --- findings --------------------------------------------------------------------------


@admin.register(Finding)
class FindingAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "run",
        "severity",
        "category",
        "kind",
        "title",
        "records",
        "amount_at_risk",
    )
    list_filter = ("severity", "category", "source")
    search_fields = ("=run__batch__id", "run__batch__file_name", "^run__batch__sha256")
    list_select_related = ("run",)
    # Newest first by primary key: the model's ("run", "position") order would sort 100k
    # rows through a join on every page.
    ordering = ("-id",)
    readonly_fields = [f.name for f in Finding._meta.fields]
    actions = ("export_findings_csv",)
    # No second COUNT(*) over the whole table when a filter is on: 100k rows add up.
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    @admin.display(description="records")
    def records(self, finding: Finding) -> str:
        ids = finding.record_ids
        return ", ".join(ids[:5]) + (f" +{len(ids) - 5}" if len(ids) > 5 else "")

    @admin.action(description="Export selected findings as CSV")
    def export_findings_csv(
        self, request: HttpRequest, queryset: QuerySet[Finding]
    ) -> StreamingHttpResponse:
        return findings_csv_response(
            queryset.order_by("run_id", "position"), "findings.csv", with_run=True
        )
