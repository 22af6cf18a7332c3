"""What the team turned down in a dataset: a finding's fingerprint (Dismissal) and a
tuning proposal (DismissedProposal)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from reviews.models.datasets import Dataset


class Dismissal(models.Model):
    """The team's "this is not a problem" for one fingerprint of one dataset. It lasts
    until undone; undoing keeps the row (who undid it, when), and a later dismissal of
    the same fingerprint is a new row."""

    class Via(models.TextChoices):
        DASHBOARD = "dashboard"
        API = "api", "API"
        ADMIN = "admin"
        CLI = "cli", "command line"

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="dismissals")
    fingerprint = models.CharField(max_length=16)
    # The finding as the team saw it when dismissing it.
    category = models.CharField(max_length=32)
    kind = models.CharField(max_length=64)
    title = models.CharField(max_length=500)
    reason = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="dismissals",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Where it was made: the command line names a user only when told one (--user), so a
    # dismissal without a user says where it came from rather than "someone".
    via = models.CharField(max_length=16, choices=Via.choices, blank=True, default="")
    undone_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="undone_dismissals",
    )
    undone_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "fingerprint"],
                condition=models.Q(undone_at__isnull=True),
                name="one_active_dismissal_per_fingerprint",
            )
        ]

    def __str__(self) -> str:
        return f"{self.fingerprint} in {self.dataset_id}: {self.reason[:40]}"

    @property
    def is_active(self) -> bool:
        return self.undone_at is None


class DismissedProposal(models.Model):
    """A tuning proposal the team turned down: not proposed again for its dataset."""

    dataset = models.ForeignKey(
        Dataset, on_delete=models.CASCADE, related_name="dismissed_proposals"
    )
    proposal = models.CharField(max_length=300)
    reason = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["dataset", "proposal"], name="one_dismissed_proposal")
        ]

    def __str__(self) -> str:
        return f"{self.proposal} turned down in {self.dataset_id}"
