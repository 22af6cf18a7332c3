from django.contrib import admin

from ledger import reports
from ledger.models import AgentModelOverride, LedgerEntry, ModelRate, UnavailableModel
from workspaces.admin import WorkspaceScoped


def _availability(model: str) -> str:
    """'unavailable since …: <the gateway's words>' for a model the gateway said is gone."""
    row = UnavailableModel.objects.filter(model=model).first()
    if row is None:
        return "ok"
    return f"UNAVAILABLE since {row.first_seen_at:%Y-%m-%d %H:%M} UTC: {row.message}"


@admin.register(LedgerEntry)
class LedgerEntryAdmin(WorkspaceScoped, admin.ModelAdmin):
    workspace_path = "workspace"
    list_display = (
        "created_at",
        "run",
        "workspace",
        "agent",
        "model_requested",
        "model_attempted",
        "model",
        "input_tokens",
        "cached_tokens",
        "output_tokens",
        "cost_micros",
        "gateway_cost_micros",
        "latency_ms",
        "outcome",
    )
    list_filter = ("model", "model_attempted", "agent", "outcome", "run__mode")
    date_hierarchy = "created_at"
    list_select_related = ("run", "workspace")
    change_list_template = "ledger/admin/ledgerentry_change_list.html"

    # Append-only: the gateway writes one row per call attempt; the admin only reads.
    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def changelist_view(self, request, extra_context=None):
        response = super().changelist_view(request, extra_context)
        # Totals over every row the filters and date drill-down select, not just this
        # page: the same sums as the /spend/ page (ledger.reports).
        context = getattr(response, "context_data", None) or {}
        if "cl" in context:
            entries = context["cl"].queryset
            context["spend_total"] = reports.usage(entries)
            context["spend_by_model"] = reports.usage_by(entries, "model")
        return response


@admin.register(ModelRate)
class ModelRateAdmin(admin.ModelAdmin):
    """USD per 1M tokens; every call after an edit is priced with the new rate."""

    list_display = (
        "model",
        "input_usd_per_m",
        "cached_input_usd_per_m",
        "output_usd_per_m",
        "availability",
        "updated_at",
    )
    list_editable = ("input_usd_per_m", "cached_input_usd_per_m", "output_usd_per_m")
    search_fields = ("model",)

    @admin.display(description="gateway says")
    def availability(self, obj: ModelRate) -> str:
        return _availability(obj.model)


@admin.register(AgentModelOverride)
class AgentModelOverrideAdmin(admin.ModelAdmin):
    """Which model each agent calls; read on every call, so no restart is needed."""

    list_display = ("agent", "model", "availability", "updated_at")
    list_editable = ("model",)

    @admin.display(description="gateway says")
    def availability(self, obj: AgentModelOverride) -> str:
        return _availability(obj.model)


@admin.register(UnavailableModel)
class UnavailableModelAdmin(admin.ModelAdmin):
    """Models the gateway named as unknown or retired. Rows come and go with the calls
    (ledger.availability); deleting one only forgets it until the next failed call."""

    list_display = ("model", "first_seen_at", "last_seen_at", "message")
    readonly_fields = ("model", "message", "first_seen_at", "last_seen_at")
    search_fields = ("model",)

    def has_add_permission(self, request) -> bool:
        return False
