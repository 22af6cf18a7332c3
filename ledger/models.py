"""The ledger: one entry per model call attempt, priced in micro-dollars."""

from __future__ import annotations

from django.db import models
from django.db.models import F
from django.db.models.functions import Coalesce

from reviews.engine.specialists import NAMES as SPECIALIST_NAMES
from workspaces.models import default_workspace_id


class LedgerEntry(models.Model):
    # One row per attempt. `model_requested` is always the agent's own model (the first
    # of its failback chain), `model_attempted` the one this attempt called, `model` the
    # one that served it (None if none did), so a failed-back call reads as in
    # docs/output.md: requested 3.1-flash-lite, attempted and served by 2.5-flash-lite,
    # "failback"; and the failed attempt before it names 3.1-flash-lite as attempted,
    # served by none.
    class Outcome(models.TextChoices):
        # Served by the model requested.
        OK = "ok"
        # The attempt failed, with its real cause: no reply in time, an HTTP or
        # transport error, an open breaker (nothing was sent) or a reply that was not
        # the JSON asked for (then repaired once: the repair has a row of its own).
        # Whether the chain moved on to a failback model shows in the next row.
        TIMEOUT = "timeout"
        HTTP_ERROR = "http_error"
        BREAKER_OPEN = "breaker_open"
        INVALID_OUTPUT = "invalid_output"
        # Served, by a failback model, after the requested one failed or its breaker
        # was open.
        FAILBACK = "failback"
        # Written before the request is sent, with the tokens it sends (estimated), and
        # settled to one of the above when the reply (or the error) comes back.
        PENDING = "pending"
        # A pending row never settled: its worker died mid-call (ledger.pending). The
        # request reached the gateway; its tokens sent are counted, the reply's are not.
        LOST = "lost"

    run = models.ForeignKey(
        "reviews.ReviewRun", null=True, on_delete=models.SET_NULL, related_name="ledger_entries"
    )
    # The run's workspace (a call without a run: the default one), kept on the row so
    # spend by workspace is one grouped query, and it outlives a deleted run.
    workspace = models.ForeignKey(
        "workspaces.Workspace",
        on_delete=models.PROTECT,
        related_name="+",
        default=default_workspace_id,
    )
    agent = models.CharField(max_length=32, db_index=True)
    model_requested = models.CharField(max_length=200)
    model_attempted = models.CharField(max_length=200, default="", blank=True)
    model = models.CharField(max_length=200, null=True, blank=True)  # served it; None if none
    input_tokens = models.IntegerField(default=0)
    cached_tokens = models.IntegerField(default=0)
    output_tokens = models.IntegerField(default=0)
    cost_micros = models.BigIntegerField(default=0)  # integer micro-dollars, our rate table
    # What the gateway said the call cost (OpenRouter's usage.cost); None if it did not.
    gateway_cost_micros = models.BigIntegerField(null=True, blank=True)
    latency_ms = models.IntegerField(default=0)
    outcome = models.CharField(max_length=20, choices=Outcome.choices, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        verbose_name_plural = "ledger entries"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.agent} {self.model_requested} {self.outcome}"

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class BudgetDay(models.Model):
    """The daily token budget's counter in the embedded mode (no Redis): tokens spent or
    reserved on one UTC day. ledger.budget changes it only by conditional UPDATEs."""

    day = models.DateField(unique=True)
    reserved = models.BigIntegerField(default=0)  # input + output tokens

    class Meta:
        ordering = ["-day"]

    def __str__(self) -> str:
        return f"{self.day}: {self.reserved:,} tokens"


class ModelRate(models.Model):
    """What one model costs, in USD per million tokens. Admin-editable: a price change
    at the provider is a row edit, and every later call is priced with it."""

    model = models.CharField(max_length=200, unique=True)
    input_usd_per_m = models.DecimalField(max_digits=12, decimal_places=6)
    cached_input_usd_per_m = models.DecimalField(max_digits=12, decimal_places=6)
    output_usd_per_m = models.DecimalField(max_digits=12, decimal_places=6)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["model"]

    def __str__(self) -> str:
        return self.model


class AgentModelOverride(models.Model):
    """Which model an agent calls. Read on every call, so an edit in the admin takes
    effect on the next call without a restart. Without a row, settings.LLM_ROSTER, then
    the default roster in reviews.llm.roster applies (none is seeded: ledger/0004)."""

    # Every specialist of the registry (a new one needs a migration for these choices),
    # then the coordinator; the coordinator of a trivial batch runs on the cheap model
    # (DESIGN principle 3).
    Agent = models.TextChoices(
        "Agent",
        [(name.upper(), (name, name.title())) for name in SPECIALIST_NAMES]
        + [
            ("COORDINATOR", ("coordinator", "coordinator (lite and full tiers)")),
            ("COORDINATOR_TRIVIAL", ("coordinator_trivial", "coordinator (trivial tier)")),
        ],
    )

    agent = models.CharField(max_length=32, unique=True, choices=Agent.choices)
    model = models.CharField(max_length=200)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["agent"]

    def __str__(self) -> str:
        return f"{self.agent}: {self.model}"

    def clean(self) -> None:
        from django.core.exceptions import ValidationError

        # A model without a rate would be billed at zero: refuse it up front.
        if self.model and not ModelRate.objects.filter(model=self.model).exists():
            raise ValidationError({"model": "No rate for this model: add it under Model rates."})


class UnavailableModel(models.Model):
    """A model the gateway named as unknown, invalid, not found or retired, with its
    words and when that was first and last seen. Written by ledger.availability when a
    call fails that way, deleted when the model serves a call again; shown in the admin
    and on the spend page so an operator knows to change the roster."""

    model = models.CharField(max_length=200, unique=True)
    message = models.TextField()  # the gateway's error, redacted and cut short
    first_seen_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()

    class Meta:
        ordering = ["model"]

    def __str__(self) -> str:
        return f"{self.model} (unavailable since {self.first_seen_at:%Y-%m-%d %H:%M} UTC)"


def requester(field: str = "id") -> Coalesce:
    """The user who asked for a ledger entry's run, as a query expression over
    LedgerEntry: the run's own requester (a re-run's), else its batch's uploader. None
    for calls no user asked for (a scheduled pull, a call without a run). The per-user
    spend (ledger.reports) and budget (ledger.budget) both count by it."""
    return Coalesce(F(f"run__created_by__{field}"), F(f"run__batch__created_by__{field}"))
