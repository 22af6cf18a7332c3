"""Admin for applied merges: evidence, never edited or deleted by hand."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from reviews.models import AppliedMerge
from workspaces.admin import ScopedRelatedFilter, WorkspaceScoped


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
