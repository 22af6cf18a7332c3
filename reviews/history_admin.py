"""Admin for dataset history: datasets (editable), dismissals (who, when, why; undo as
an action) and the findings action that dismisses. Every dismissal and undo goes through
reviews.orchestration.dataset.dismissals, the same code as the dashboard, the CLI and the API."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from reviews.models import AppliedMerge, Dataset, Dismissal, Finding
from reviews.orchestration.dataset.dismissals import DismissalError, dismiss, undo_dismissal
from reviews.orchestration.dataset.pipelines import validate_stored
from workspaces.access import scope
from workspaces.admin import ScopedRelatedFilter, WorkspaceScoped
from workspaces.models import Role


def changelist_url(model: str, **filters: object) -> str:
    query = "&".join(f"{key}={value}" for key, value in filters.items())
    return f"{reverse(f'admin:{model}_changelist')}?{query}"


# --- datasets --------------------------------------------------------------------------


class DatasetForm(forms.ModelForm):
    class Meta:
        model = Dataset
        fields = "__all__"  # noqa: DJ007 (every editable field of a small model)
        help_texts = {
            "pipelines": (
                "The portal's deal pipelines, read for every later sync: "
                '[{"id": "default", "label": "Sales Pipeline", "stages": [{"id": '
                '"closedwon", "label": "Closed Won", "closed": true, "won": true}]}]. '
                "Or upload HubSpot's pipelines response on the dataset page."
            )
        }

    def clean_pipelines(self) -> list:
        value = self.cleaned_data.get("pipelines") or []
        errors = validate_stored(value)
        if errors:
            raise forms.ValidationError(errors[:10])
        return value


@admin.register(Dataset)
class DatasetAdmin(WorkspaceScoped, admin.ModelAdmin):
    """Editable: the team names its CRMs, chooses what decides their verdicts, and
    edits the deal pipelines every sync is read with."""

    form = DatasetForm
    workspace_path = "workspace"
    form_role = Role.ADMIN  # dataset settings are for the workspace's admins
    change_role = Role.ADMIN
    list_display = ("name", "workspace", "verdict_scope", "batches_link", "page_link", "created")
    list_filter = ("verdict_scope",)
    search_fields = ("name",)
    readonly_fields = ("created", "page_link", "pipelines_from", "pipelines_updated_at")

    def save_model(self, request: HttpRequest, obj: Dataset, form, change: bool) -> None:
        if "pipelines" in form.changed_data:
            obj.pipelines_from = "admin"
            obj.pipelines_updated_at = timezone.now()
        super().save_model(request, obj, form, change)

    @admin.display(description="history")
    def page_link(self, dataset: Dataset) -> str:
        if dataset.pk is None:
            return "–"
        url = reverse("reviews:dataset", args=[dataset.name]) + f"?workspace={dataset.workspace_id}"
        return format_html('<a href="{}">dataset page</a>', url)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Dataset]:
        return super().get_queryset(request).annotate(batch_count=Count("batches"))

    @admin.display(description="batches", ordering="batch_count")
    def batches_link(self, dataset: Dataset) -> str:
        if not dataset.batch_count:
            return "–"
        url = changelist_url("reviews_batch", dataset__id__exact=dataset.pk)
        return format_html('<a href="{}">{}</a>', url, dataset.batch_count)


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
                    dataset, finding.fingerprint, reason=reason, user=request.user, finding=finding
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


@admin.register(AppliedMerge)
class AppliedMergeAdmin(WorkspaceScoped, admin.ModelAdmin):
    """Merges sent to HubSpot: evidence of who asked and what HubSpot answered, the
    snapshot taken first and any undo (old id -> restored_id). Made through
    connectors.merges and connectors.undo only, never by hand."""

    workspace_path = "dataset__workspace"

    list_display = (
        "requested_at",
        "dataset",
        "object_type",
        "merged_id",
        "primary_id",
        "survivor_id",
        "status",
        "http_status",
        "requested_by",
        "undo_status",
        "restored_id",
    )
    list_filter = ("status", "undo_status", "object_type", ("dataset", ScopedRelatedFilter))
    search_fields = ("merged_id", "primary_id", "survivor_id", "restored_id", "fingerprint")
    readonly_fields = [f.name for f in AppliedMerge._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
