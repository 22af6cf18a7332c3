"""Connections and pulls in the admin. The token is never shown: only its hint."""

from __future__ import annotations

from django.contrib import admin

from connectors.models import Connection, Pull
from workspaces.admin import WorkspaceScoped


@admin.register(Connection)
class ConnectionAdmin(WorkspaceScoped, admin.ModelAdmin):
    workspace_path = "dataset__workspace"
    list_display = (
        "dataset",
        "provider",
        "portal_id",
        "every_hours",
        "active",
        "next_pull_at",
        "last_full_at",
    )
    list_filter = ("provider", "active")
    search_fields = ("dataset__name", "portal_id")
    exclude = ("token_sealed",)  # sealed; connect again to change it
    readonly_fields = (
        "dataset",
        "provider",
        "token_hint",
        "portal_id",
        "company_currency",
        "time_zone",
        "account",
        "created_at",
        "connected_by",
        "last_full_at",
    )

    def has_add_permission(self, request) -> bool:  # connect on the dataset page or the CLI
        return False


@admin.register(Pull)
class PullAdmin(WorkspaceScoped, admin.ModelAdmin):
    workspace_path = "connection__dataset__workspace"
    list_display = (
        "pk",
        "connection",
        "kind",
        "status",
        "started_at",
        "records",
        "requests",
        "waited_seconds",
        "error",
    )
    list_filter = ("status", "kind")
    search_fields = ("connection__dataset__name", "error")
    readonly_fields = [f.name for f in Pull._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
