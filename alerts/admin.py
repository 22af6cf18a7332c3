"""Admin: subscriptions are edited here (the secret is write-only); deliveries and
their attempts are records, read-only."""

from __future__ import annotations

import json
import secrets

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest
from django.utils.html import format_html

from alerts import destinations
from alerts.models import Trigger, WebhookAttempt, WebhookDelivery, WebhookSubscription
from workspaces.admin import WorkspaceScoped
from workspaces.models import Role


class WebhookURLField(forms.URLField):
    default_validators = [destinations.URLSyntax()]  # an allow-listed `hooks` passes


class SubscriptionForm(forms.ModelForm):
    url = WebhookURLField(max_length=2000, assume_scheme="https")
    secret = forms.CharField(
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="Signs every delivery (X-Revreview-Signature). Leave empty: a new "
        "subscription gets a generated one (shown once); a saved one keeps its own.",
    )
    triggers = forms.MultipleChoiceField(
        choices=Trigger.choices,
        initial=[Trigger.REQUEST_CHANGES],
        widget=forms.CheckboxSelectMultiple,
        help_text="Alert when a run of the dataset finishes with one of these.",
    )

    class Meta:
        model = WebhookSubscription
        fields = ("dataset", "url", "payload_format", "triggers", "secret", "active")

    def clean_url(self) -> str:
        """Refused here already what every delivery would refuse (each checks again,
        with the name resolved afresh)."""
        url = self.cleaned_data["url"]
        try:
            destinations.validate(url)
        except destinations.Refused as error:
            raise forms.ValidationError(f"This URL cannot receive webhooks: {error}.") from None
        return url

    def clean_secret(self) -> str:
        return self.cleaned_data["secret"] or (self.instance.secret if self.instance.pk else "")


@admin.register(WebhookSubscription)
class WebhookSubscriptionAdmin(WorkspaceScoped, admin.ModelAdmin):
    workspace_path = "dataset__workspace"
    form_role = Role.ADMIN  # webhooks are managed by the workspace's admins
    change_role = Role.ADMIN
    form = SubscriptionForm
    list_display = ("dataset", "url", "payload_format", "trigger_list", "active", "created_at")
    list_filter = ("active", "payload_format")
    search_fields = ("dataset__name", "url")

    def save_model(self, request: HttpRequest, obj: WebhookSubscription, form, change) -> None:
        if not obj.secret:
            obj.secret = "whsec_" + secrets.token_urlsafe(24)
            messages.warning(
                request, f"The signing secret is {obj.secret} — copy it now; it is not shown again."
            )
        super().save_model(request, obj, form, change)

    @admin.display(description="triggers")
    def trigger_list(self, obj: WebhookSubscription) -> str:
        return trigger_labels(obj.triggers)


def trigger_labels(triggers: list[str]) -> str:
    """'Changes requested, degraded', not the stored JSON list."""
    labels = dict(Trigger.choices)
    return ", ".join(str(labels.get(t, t)) for t in triggers) or "–"


class AttemptInline(admin.TabularInline):
    model = WebhookAttempt
    fields = (
        "number",
        "started_at",
        "address",
        "latency_ms",
        "response_code",
        "ok",
        "error",
        "excerpt",
    )
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(WorkspaceScoped, admin.ModelAdmin):
    workspace_path = "subscription__dataset__workspace"
    list_display = ("id", "run", "subscription", "trigger_list", "status", "attempts", "created_at")
    list_filter = ("status",)
    list_select_related = ("subscription__dataset", "run")
    inlines = [AttemptInline]
    readonly_fields = (
        "subscription",
        "run",
        "trigger_list",
        "status",
        "attempts",
        "next_attempt_at",
        "claimed_at",
        "created_at",
        "finished_at",
        "body_shown",
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    @admin.display(description="triggers")
    def trigger_list(self, obj: WebhookDelivery) -> str:
        return trigger_labels(obj.triggers)

    @admin.display(description="body")
    def body_shown(self, obj: WebhookDelivery) -> str:
        """The body as sent, indented and wrapped inside the page."""
        try:
            text = json.dumps(json.loads(obj.body), indent=2, ensure_ascii=False)
        except ValueError:
            text = obj.body
        return format_html('<pre class="delivery-body">{}</pre>', text)
