"""Admin for datasets: editable by the workspace's admins (name, what decides the
verdict, the deal pipelines every sync is read with)."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from reviews.admin.base import changelist_url
from reviews.models import Dataset
from reviews.orchestration.dataset.pipelines import validate_stored
from workspaces.admin import WorkspaceScoped
from workspaces.models import Role


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
