"""Admin: subscriptions are edited here (the secret is write-only); deliveries and
their attempts are records, read-only."""

from __future__ import annotations

import secrets

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest

from alerts import destinations
from alerts.models import Trigger, WebhookAttempt, WebhookDelivery, WebhookSubscription


class SubscriptionForm(forms.ModelForm):
    url = forms.URLField(max_length=2000, assume_scheme="https")
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
class WebhookSubscriptionAdmin(admin.ModelAdmin):
    form = SubscriptionForm
    list_display = ("dataset", "url", "payload_format", "triggers", "active", "created_at")
    list_filter = ("active", "payload_format")
    search_fields = ("dataset__name", "url")

    def save_model(self, request: HttpRequest, obj: WebhookSubscription, form, change) -> None:
        if not obj.secret:
            obj.secret = "whsec_" + secrets.token_urlsafe(24)
            messages.warning(
                request, f"The signing secret is {obj.secret} — copy it now; it is not shown again."
            )
        super().save_model(request, obj, form, change)


class AttemptInline(admin.TabularInline):
    model = WebhookAttempt
    fields = ("number", "started_at", "latency_ms", "response_code", "ok", "error", "excerpt")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = ("id", "run", "subscription", "triggers", "status", "attempts", "created_at")
    list_filter = ("status",)
    list_select_related = ("subscription__dataset", "run")
    inlines = [AttemptInline]
    readonly_fields = (
        "subscription",
        "run",
        "triggers",
        "status",
        "attempts",
        "next_attempt_at",
        "claimed_at",
        "created_at",
        "finished_at",
        "body",
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
