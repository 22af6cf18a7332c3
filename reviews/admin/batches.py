"""Admin for batches: read-only, with their files and a link to their runs."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from reviews.admin.base import ReadOnlyInline, changelist_url
from reviews.models import Batch, BatchFile
from workspaces.admin import ScopedRelatedFilter, WorkspaceScoped


class BatchFileInline(ReadOnlyInline):
    model = BatchFile
    fields = ("name", "size_bytes", "sha256", "key")  # not `data`: the bytes can be 200 MB
    readonly_fields = fields


@admin.register(Batch)
class BatchAdmin(WorkspaceScoped, admin.ModelAdmin):
    workspace_path = "workspace"
    list_display = (
        "id",
        "file_name",
        "external_id",
        "status",
        "companies",
        "contacts",
        "deals",
        "workspace",
        "dataset",
        "runs_link",
        "created_by",
        "created_at",
    )
    list_filter = ("status", "source", ("dataset", ScopedRelatedFilter))
    search_fields = ("=id", "external_id", "file_name", "^sha256")
    list_select_related = ("created_by", "dataset", "workspace")
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
        url = changelist_url("reviews_reviewrun", batch__id__exact=batch.pk)
        return format_html('<a href="{}">{}</a>', url, batch.run_count)
