"""A run's Verdict (and a break-glass override beside it), and VERDICT_LABELS: the
decisions in words."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from reviews.models.runs import ReviewRun


class Verdict(models.Model):
    # Display labels are VERDICT_LABELS (below), not the choices' labels: changing
    # choices would cost a migration for no change in the data.
    class Decision(models.TextChoices):
        APPROVE = "approve"
        APPROVE_WITH_COMMENTS = "approve_with_comments"
        REQUEST_CHANGES = "request_changes"

    run = models.OneToOneField(ReviewRun, on_delete=models.CASCADE, related_name="verdict")
    decision = models.CharField(max_length=32, choices=Decision.choices)
    summary = models.TextField()
    pipeline_at_risk = models.DecimalField(max_digits=18, decimal_places=2, default=0)
    # {currency: "amount"}: the pipeline at risk per currency, never summed across them.
    pipeline_by_currency = models.JSONField(default=dict, blank=True)
    # Break glass: the original decision stays; the override is recorded beside it.
    overridden_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    override_reason = models.TextField(blank=True)
    overridden_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.label} (run {self.run_id})"

    @property
    def original_label(self) -> str:
        """The review's own verdict, as a person reads it."""
        return VERDICT_LABELS[self.decision]

    @property
    def label(self) -> str:
        """What counts, saying so when break glass overrode the review."""
        if self.is_overridden:
            return f"Approved by break glass (was: {self.original_label})"
        return self.original_label

    @property
    def is_overridden(self) -> bool:
        return self.overridden_at is not None

    @property
    def effective_decision(self) -> str:
        return self.Decision.APPROVE if self.is_overridden else self.decision


VERDICT_LABELS = {
    Verdict.Decision.APPROVE: "Approved",
    Verdict.Decision.APPROVE_WITH_COMMENTS: "Approved with comments",
    Verdict.Decision.REQUEST_CHANGES: "Changes requested",
}
