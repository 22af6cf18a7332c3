"""Admin for API tokens: staff create one for any user (shown once) and revoke them;
the digest is never editable."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from reviews.apiauth.models import ApiToken, IdempotencyKey
from reviews.apiauth.tokens import create_token, revoke, token_workspace
from workspaces.access import may, scope
from workspaces.admin import WorkspaceScoped
from workspaces.models import Role


class NewTokenForm(forms.ModelForm):
    scopes = forms.MultipleChoiceField(
        choices=ApiToken.Scope.choices,
        initial=ApiToken.Scope.values,
        widget=forms.CheckboxSelectMultiple,
    )

    class Meta:
        model = ApiToken
        fields = ("workspace", "user", "name", "scopes")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["workspace"].required = False  # the user's only one, when left empty

    def clean(self) -> dict:
        data = super().clean()
        if data.get("user") and not data.get("workspace"):
            try:
                data["workspace"] = token_workspace(data["user"], None)
            except ValueError as error:
                raise forms.ValidationError(str(error)) from None
        user, name = data.get("user"), (data.get("name") or "").strip()
        workspace = data.get("workspace")
        if user and workspace and not may(user, workspace.pk, Role.VIEWER):
            raise forms.ValidationError(f"{user} is not a member of workspace {workspace}")
        if user and ApiToken.objects.filter(user=user, name=name, revoked_at__isnull=True).exists():
            raise forms.ValidationError(f"{user} already has an active token named {name!r}")
        return data


@admin.register(ApiToken)
class ApiTokenAdmin(WorkspaceScoped, admin.ModelAdmin):
    workspace_path = "workspace"
    form_role = Role.ADMIN  # tokens for others: the workspace's admins
    change_role = Role.ADMIN
    list_display = (
        "name",
        "user",
        "workspace",
        "prefix",
        "scopes",
        "created_at",
        "last_used_at",
        "revoked_at",
    )
    list_filter = ("revoked_at",)
    search_fields = ("name", "user__username", "prefix")
    readonly_fields = (
        "user",
        "workspace",
        "name",
        "prefix",
        "scopes",
        "created_at",
        "last_used_at",
        "revoked_at",
    )
    actions = ["revoke"]

    def get_form(self, request: HttpRequest, obj=None, **kwargs):
        if obj is None:  # adding: the fields a new token needs
            kwargs["form"] = NewTokenForm
        return super().get_form(request, obj, **kwargs)

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        return self.readonly_fields if obj else ()

    def get_fields(self, request: HttpRequest, obj=None):
        return self.readonly_fields if obj else ("workspace", "user", "name", "scopes")

    def save_model(self, request: HttpRequest, obj: ApiToken, form, change: bool) -> None:
        if change:
            return  # a token is never edited, only revoked
        new = create_token(obj.user, obj.name, form.cleaned_data["scopes"], workspace=obj.workspace)
        obj.pk = new.token.pk
        messages.warning(
            request, f"Token for {obj.user}: {new.secret} — copy it now; it is not shown again."
        )

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        # Another member's token: only a workspace's admins may revoke it.
        count = revoke(scope(queryset, request.user, "workspace", Role.ADMIN))
        messages.success(request, f"{count} token(s) revoked.")


@admin.register(IdempotencyKey)
class IdempotencyKeyAdmin(WorkspaceScoped, admin.ModelAdmin):
    workspace_path = "batch__workspace"
    list_display = ("key", "user", "batch", "run", "created_at")
    search_fields = ("key", "user__username")
    readonly_fields = ("user", "key", "request_sha256", "batch", "run", "created_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
