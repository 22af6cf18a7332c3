"""Admin for dismissals (who, when, why; undo as an action) and the findings action
that dismisses. Every dismissal and undo goes through
reviews.orchestration.dataset.dismissals, the same code as the dashboard, the CLI and the
API."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from reviews.models import Dismissal, Finding
from reviews.orchestration.dataset.dismissals import DismissalError, dismiss, undo_dismissal
from workspaces.access import scope
from workspaces.admin import ScopedRelatedFilter, WorkspaceScoped
from workspaces.models import Role


@admin.register(Dismissal)
class DismissalAdmin(WorkspaceScoped, admin.ModelAdmin):
    workspace_path = "dataset__workspace"
    """Who dismissed what, when and why. Undo goes through the same code as the
    dashboard and the CLI (reviews.orchestration.dataset.dismissals), so it is recorded."""

    list_display = (
        "fingerprint",
        "dataset",
        "title",
        "kind",
        "reason",
        "created_by",
        "created_at",
        "undone_by",
        "undone_at",
    )
    list_filter = (
        ("dataset", ScopedRelatedFilter),
        "category",
        "kind",
        ("undone_at", admin.EmptyFieldListFilter),
    )
    search_fields = ("fingerprint", "title", "reason", "dataset__name")
    list_select_related = ("dataset", "created_by", "undone_by")
    readonly_fields = [f.name for f in Dismissal._meta.fields]
    actions = ("undo_selected",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # dismissed from a finding, where its title and fingerprint are known

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    @admin.action(description="Undo selected dismissals")
    def undo_selected(self, request: HttpRequest, queryset: QuerySet[Dismissal]) -> None:
        undone = 0
        queryset = scope(queryset, request.user, "dataset__workspace", Role.REVIEWER)
        for dismissal in queryset.filter(undone_at__isnull=True).select_related("dataset"):
            try:
                undo_dismissal(dismissal.dataset, dismissal.fingerprint, user=request.user)
            except DismissalError:
                continue  # undone meanwhile
            undone += 1
        self.message_user(request, f"Undid {undone} dismissals.", messages.SUCCESS)


def dismiss_findings(
    modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Finding]
) -> HttpResponse | None:
    """The findings admin's Dismiss action: asks for a reason, then dismisses each
    selected finding's fingerprint in its run's dataset."""
    # Only where the user may dismiss (reviewer or admin of the finding's workspace).
    queryset = scope(queryset, request.user, "run__batch__workspace", Role.REVIEWER)
    findings = list(queryset.select_related("run__batch__dataset"))
    reason = request.POST.get("dismiss_reason", "").strip()
    if request.POST.get("confirm") == "yes" and reason:
        done, refused = 0, []
        for finding in findings:
            dataset = finding.run.batch.dataset
            if dataset is None:
                refused.append(f"#{finding.pk}: its batch belongs to no dataset")
                continue
            try:
                dismiss(
                    dataset,
                    finding.fingerprint,
                    reason=reason,
                    user=request.user,
                    finding=finding,
                    via=Dismissal.Via.ADMIN,
                )
            except DismissalError as error:
                refused.append(f"#{finding.pk}: {error}")
                continue
            done += 1
        modeladmin.message_user(request, f"Dismissed {done} finding(s).", messages.SUCCESS)
        for line in refused:
            modeladmin.message_user(request, f"Not dismissed {line}", messages.ERROR)
        return None
    context = {
        **modeladmin.admin_site.each_context(request),
        "title": "Dismiss findings",
        "findings": findings,
        "opts": modeladmin.model._meta,
        "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
        "reason_missing": request.POST.get("confirm") == "yes",
    }
    return TemplateResponse(request, "admin/reviews/dismiss_confirmation.html", context)
