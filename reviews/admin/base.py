"""What the reviews admin pages share: read-only records and links between lists."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest
from django.urls import reverse


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


def changelist_url(model: str, **filters: object) -> str:
    query = "&".join(f"{key}={value}" for key, value in filters.items())
    return f"{reverse(f'admin:{model}_changelist')}?{query}"
