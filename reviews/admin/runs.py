"""Admin for runs: read-only, with their verdict, agents and first findings inline;
re-run, CSV export and purge as actions."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import Truncator

from ledger.ratelimit import rate_keys
from reviews.admin.base import ReadOnly, ReadOnlyInline, changelist_url
from reviews.audit import purge_runs, why_kept
from reviews.models import VERDICT_LABELS, AgentRun, Finding, ReviewRun, Verdict, findings_of
from reviews.orchestration.intake.serve import ServeRefused, rerun
from reviews.reports.exports import findings_csv_response, findings_of_runs
from reviews.search import search_runs
from workspaces.access import scope
from workspaces.admin import WorkspaceScoped
from workspaces.models import Role

FINDINGS_INLINE_LIMIT = 50


class VerdictInline(ReadOnly, admin.StackedInline):
    model = Verdict
    fields = (
        "outcome",
        "original_verdict",
        "summary",
        "pipeline_at_risk",
        "overridden_by",
        "override_reason",
        "overridden_at",
        "created_at",
    )
    readonly_fields = fields

    @admin.display(description="verdict")
    def outcome(self, verdict: Verdict) -> str:
        return verdict.label

    @admin.display(description="the review's own verdict")
    def original_verdict(self, verdict: Verdict) -> str:
        return verdict.original_label


class AgentRunInline(ReadOnlyInline):
    model = AgentRun
    fields = (
        "agent",
        "status",
        "model",
        "started_at",
        "finished_at",
        "heartbeat_at",
        "retries",
        "error",
        "refused",
    )
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


class VerdictFilter(admin.SimpleListFilter):
    """By the verdict that counts, in words; break glass apart from the review's own."""

    title = "verdict"
    parameter_name = "verdict"
    BREAK_GLASS = "break_glass"

    def lookups(self, request: HttpRequest, model_admin) -> list[tuple[str, str]]:
        return [*VERDICT_LABELS.items(), (self.BREAK_GLASS, "Approved by break glass")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[ReviewRun]):
        if self.value() == self.BREAK_GLASS:
            return queryset.filter(verdict__overridden_at__isnull=False)
        if self.value() in VERDICT_LABELS:
            return queryset.filter(
                verdict__decision=self.value(), verdict__overridden_at__isnull=True
            )
        return queryset


@admin.register(ReviewRun)
class ReviewRunAdmin(WorkspaceScoped, admin.ModelAdmin):
    workspace_path = "batch__workspace"
    list_display = (
        "id",
        "batch_name",
        "mode",
        "tier",
        "status",
        "verdict_display",
        "degraded_mark",
        "created",
    )
    list_filter = ("status", "mode", "tier", "degraded", VerdictFilter)
    search_fields = ("batch__file_name",)  # shows the box; reviews.search does the work
    search_help_text = (
        "Batch id or number, file name, dataset, or a record id or a company, person or "
        "deal name in its findings."
    )
    list_select_related = ("batch", "verdict")
    readonly_fields = [
        "dashboard_link",
        "findings_link",
        "deletion",
        *(f.name for f in ReviewRun._meta.fields),
    ]
    inlines = (VerdictInline, AgentRunInline, FindingInline)
    actions = ("rerun_selected", "export_findings_csv", "purge_selected")

    def get_search_results(self, request: HttpRequest, queryset, search_term: str):
        return search_runs(queryset, search_term), False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False  # break glass is on the dashboard, where it is recorded with a reason

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        # Refused for a run holding ledger rows or a break-glass override; the same
        # check refuses deleting its batch (the admin asks it of every cascaded row).
        if obj is not None and why_kept(obj):
            return False
        return super().has_delete_permission(request, obj)

    def has_purge_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    @admin.display(description="batch", ordering="batch__file_name")
    def batch_name(self, run: ReviewRun) -> str:
        return f"#{run.batch_id} {Truncator(run.batch.title).chars(40)}"

    @admin.display(description="created", ordering="created_at")
    def created(self, run: ReviewRun) -> str:
        return f"{run.created_at:%Y-%m-%d %H:%M}"

    @admin.display(description="verdict", ordering="verdict__decision")
    def verdict_display(self, run: ReviewRun) -> str:
        verdict = getattr(run, "verdict", None)
        return verdict.label if verdict else "–"

    @admin.display(description="degraded", ordering="degraded")
    def degraded_mark(self, run: ReviewRun) -> str:
        # Not Django's boolean icons: they drew a red cross on every healthy run.
        if not run.degraded:
            return ""
        return format_html('<span class="run-degraded">{}</span>', "degraded")

    @admin.display(description="deletion")
    def deletion(self, run: ReviewRun) -> str:
        kept = why_kept(run)
        if not kept:
            return "allowed (no ledger rows, no break glass)"
        return f"refused: {kept}. A superuser can purge it with a reason (action Purge)."

    @admin.display(description="dashboard")
    def dashboard_link(self, run: ReviewRun) -> str:
        link = format_html(
            '<a href="{}">open run #{}</a>', reverse("reviews:run", args=[run.pk]), run.pk
        )
        dataset = run.batch.dataset
        if dataset is None:
            return link
        url = reverse("reviews:dataset", args=[dataset.name]) + f"?workspace={dataset.workspace_id}"
        return format_html('{} · <a href="{}">dataset {}</a>', link, url, dataset.name)

    @admin.display(description="findings")
    def findings_link(self, run: ReviewRun) -> str:
        total = findings_of(run).count()
        url = changelist_url("reviews_finding", run__id__exact=run.findings_run_id)
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
        # Each re-run is a request like the dashboard's: it counts against the rate limit
        # (and may be served by failback); past twice the limit the rest are refused. A
        # staff member is signed in, so it counts by user (and workspace), never address.
        keys = rate_keys(request.user.pk, None)
        new_runs = []
        # Only where the user may re-run (reviewer or admin of the run's workspace).
        queryset = scope(queryset, request.user, "batch__workspace", Role.REVIEWER)
        for run in queryset.select_related("batch"):
            try:
                new_runs.append(rerun(run, created_by=request.user, rate_keys=keys))
            except ServeRefused as error:
                self.message_user(request, f"Run #{run.pk} not re-run: {error}", messages.ERROR)
                break
        ids = ", ".join(f"#{run.pk} ({run.mode})" for run in new_runs)
        runs = "run" if len(new_runs) == 1 else "runs"
        self.message_user(request, f"Started {len(new_runs)} {runs}: {ids}.", messages.SUCCESS)

    @admin.action(description="Export findings of selected runs as CSV")
    def export_findings_csv(
        self, request: HttpRequest, queryset: QuerySet[ReviewRun]
    ) -> StreamingHttpResponse:
        runs = queryset.order_by("pk")
        return findings_csv_response(findings_of_runs(runs), "findings.csv", with_run=True)

    @admin.action(
        description="Purge selected runs (superuser, with a reason)", permissions=["purge"]
    )
    def purge_selected(
        self, request: HttpRequest, queryset: QuerySet[ReviewRun]
    ) -> HttpResponse | None:
        reason = request.POST.get("purge_reason", "").strip()
        if request.POST.get("confirm") == "yes" and reason:
            count = purge_runs(queryset, request.user, reason)
            self.message_user(request, f"Purged {count} run(s): {reason}", messages.WARNING)
            return None
        context = {
            **self.admin_site.each_context(request),
            "title": "Purge runs",
            "runs": [(run, why_kept(run)) for run in queryset.select_related("batch")],
            "opts": self.model._meta,
            "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
            "reason_missing": request.POST.get("confirm") == "yes",
        }
        return TemplateResponse(request, "admin/reviews/purge_confirmation.html", context)
