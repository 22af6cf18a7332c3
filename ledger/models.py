"""The ledger: one entry per model call attempt, priced in micro-dollars."""

from __future__ import annotations

from django.db import models


class LedgerEntry(models.Model):
    class Outcome(models.TextChoices):
        OK = "ok"
        TIMEOUT = "timeout"
        HTTP_ERROR = "http_error"
        BREAKER_OPEN = "breaker_open"
        INVALID_OUTPUT = "invalid_output"
        FAILBACK = "failback"

    run = models.ForeignKey(
        "reviews.ReviewRun", null=True, on_delete=models.SET_NULL, related_name="ledger_entries"
    )
    agent = models.CharField(max_length=32, db_index=True)
    model_requested = models.CharField(max_length=200)
    model = models.CharField(max_length=200, null=True, blank=True)  # served it; None if none
    input_tokens = models.IntegerField(default=0)
    cached_tokens = models.IntegerField(default=0)
    output_tokens = models.IntegerField(default=0)
    cost_micros = models.BigIntegerField(default=0)  # integer micro-dollars
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
