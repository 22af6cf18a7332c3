"""Admin for workspaces and their members, and WorkspaceScoped: the mixin every admin of
workspace data uses, so a staff user who is not a superuser sees (in changelists, change
views, actions and foreign-key choices) only the rows of their own workspaces."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.http import HttpRequest

from workspaces.access import may, scope, workspaces_of
from workspaces.models import Membership, Role, Workspace

# How a row of each model reaches its workspace: the FK choices of any admin form are
# narrowed by it. A model not named here is not workspace data.
WORKSPACE_PATHS = {
    "workspaces.workspace": "pk",
    "reviews.dataset": "workspace",
    "reviews.batch": "workspace",
    "reviews.reviewrun": "batch__workspace",
    "reviews.finding": "run__batch__workspace",
    "api.apitoken": "workspace",
}


def scoped_choices(model, user, role: str = Role.VIEWER) -> QuerySet | None:
    """The rows of `model` the user may pick in a form, or None if it is not workspace
    data. Users: the members of the user's workspaces where they are `role`."""
    if model is get_user_model():
        if user.is_superuser:
            return None
        return model.objects.filter(memberships__workspace__in=workspaces_of(user, role)).distinct()
    path = WORKSPACE_PATHS.get(model._meta.label_lower)
    if path is None:
        return None
    if path == "pk":
        return workspaces_of(user, role)
    return scope(model._default_manager.all(), user, path, role)


class OnlyWorkspaceField(forms.ModelChoiceField):
    """A workspace choice that may be left empty when there is only one to choose."""

    def clean(self, value):
        if value in self.empty_values:
            only = list(self.queryset[:2])
            if len(only) == 1:
                return only[0]
        return super().clean(value)


class WorkspaceScoped:
    """Set `workspace_path` (e.g. "batch__workspace") on a ModelAdmin. `form_role` is the
    role a choice in a form needs (an admin-made webhook or token: ADMIN)."""

    workspace_path = "workspace"
    form_role = Role.REVIEWER
    change_role: str | None = None  # the role changing or deleting a row needs, if any

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return scope(super().get_queryset(request), request.user, self.workspace_path)

    def formfield_for_foreignkey(self, db_field, request: HttpRequest, **kwargs):
        choices = scoped_choices(db_field.related_model, request.user, self.form_role)
        if choices is not None:
            kwargs["queryset"] = choices
        if db_field.related_model is Workspace:
            kwargs["form_class"] = OnlyWorkspaceField
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def _may_change(self, request: HttpRequest, obj) -> bool:
        if obj is None or self.change_role is None:
            return True
        return may(request.user, workspace_id_of(obj, self.workspace_path), self.change_role)

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return self._may_change(request, obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return self._may_change(request, obj) and super().has_delete_permission(request, obj)


def workspace_id_of(obj, path: str) -> int | None:
    """The workspace id of a row, by its path ("dataset__workspace" -> obj.dataset.workspace_id)."""
    *hops, last = path.split("__")
    for hop in hops:
        obj = getattr(obj, hop, None)
        if obj is None:
            return None
    return obj.pk if last == "pk" else getattr(obj, f"{last}_id", None)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    fields = ("user", "role", "created_at")
    readonly_fields = ("created_at",)


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ("name", "daily_token_budget", "created_at")
    search_fields = ("name",)
    inlines = [MembershipInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Workspace]:
        return super().get_queryset(request).filter(pk__in=workspaces_of(request.user))

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        # A team does not set its own budget: a superuser does.
        return () if request.user.is_superuser else ("daily_token_budget",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser  # a new team: a superuser or `manage.py workspace`

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        # Members are managed by the workspace's admins.
        if obj is not None and not may(request.user, obj.pk, Role.ADMIN):
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return request.user.is_superuser


class ScopedRelatedFilter(admin.RelatedFieldListFilter):
    """The list filter of a foreign key (a dataset), offering only the user's rows."""

    def field_choices(self, field, request: HttpRequest, model_admin):
        choices = scoped_choices(field.related_model, request.user)
        if choices is None:
            return super().field_choices(field, request, model_admin)
        return [(row.pk, str(row)) for row in choices]
