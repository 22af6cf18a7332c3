"""A review of a batch: the ReviewRun and each agent's part of it (AgentRun)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from reviews.models.batches import Batch


class ReviewRun(models.Model):
    class Mode(models.TextChoices):
        FRESH = "fresh"
        CACHED = "cached"
        FAILBACK = "failback"

    class Tier(models.TextChoices):
        TRIVIAL = "trivial"
        LITE = "lite"
        FULL = "full"

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="runs")
    mode = models.CharField(max_length=16, choices=Mode.choices, default=Mode.FRESH)
    reason = models.CharField(max_length=300, blank=True)  # why failback, when it is
    # The review configuration this run used
    # (reviews.orchestration.serving.decide.config_fingerprint), and
    # for a cached or failback run, the finished run whose findings it serves. Those
    # findings are read in place (findings_of), not copied, so that run is protected.
    config_fingerprint = models.CharField(max_length=64, blank=True, db_index=True)
    reused_run = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="reused_by"
    )
    # Dataset history (docs/history.md): the run this one was compared with (chosen when
    # the run is made, so a re-run compares with the same one), the baseline's findings
    # gone now, and the findings the team dismissed (each with who and why).
    baseline_run = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="compared_by"
    )
    resolved = models.JSONField(default=list, blank=True)
    suppressed = models.JSONField(default=list, blank=True)
    # What still stands in the dataset after this sync, whatever decided the verdict
    # (reviews.engine.history.compare.standing: state, critical, warning, amount, since_run);
    # {} for runs made before it was kept. A served run carries its source's.
    standing = models.JSONField(default=dict, blank=True)
    # The batch's health score (reviews.engine.health: 0.0 to 100.0, None for an empty
    # batch or a run that did not finish), kept so the home page's trends read one column.
    health = models.DecimalField(max_digits=4, decimal_places=1, null=True, blank=True)
    # What each of the policy's team rules did: [{"id", "object", "severity", "status"
    # ("ran" or "could_not_run"), "count", "why"}] (reviews.engine.team_rules.run).
    team_rules = models.JSONField(default=list, blank=True)
    tier = models.CharField(max_length=16, choices=Tier.choices)
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True
    )
    degraded = models.BooleanField(default=False)
    specialists = models.JSONField(default=list, blank=True)  # the tier's roster
    as_of = models.DateTimeField()
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When its start task reached the broker (None: the dispatch failed, or not yet),
    # and how often the sweep sent it again (reviews.orchestration.run.sweep).
    dispatched_at = models.DateTimeField(null=True, blank=True)
    retries = models.PositiveSmallIntegerField(default=0)
    # Daily-budget tokens reserved for this run's model calls when it was served
    # (ledger.budget.reserve_for_run); its calls draw on them, the rest is released
    # when it finishes.
    reserved_tokens = models.PositiveIntegerField(default=0)
    # The dataset's review policy version the run used (None: the engine's rules as set).
    policy_version = models.ForeignKey(
        "PolicyVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="runs"
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Run {self.pk} of batch {self.batch_id}"

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)

    @property
    def findings_run_id(self) -> int:
        """The run whose Finding rows this run shows: its own, or the reused run's."""
        return self.reused_run_id or self.pk

    @property
    def duration_seconds(self) -> float | None:
        if self.started_at and self.finished_at:
            return (self.finished_at - self.started_at).total_seconds()
        return None


class AgentRun(models.Model):
    """One specialist's (or the coordinator's) part of a run."""

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    COORDINATOR = "coordinator"

    run = models.ForeignKey(ReviewRun, on_delete=models.CASCADE, related_name="agents")
    agent = models.CharField(max_length=32)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    model = models.CharField(max_length=200, default="rules")  # "rules": detectors only
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    # The specialist's findings in one blob (reviews.engine.findings.pack), handed to
    # the coordinator: dismissed ones too, kept for the record.
    packed_findings = models.BinaryField(default=b"", blank=True)
    # Beaten while it runs; the sweep re-dispatches an agent whose beat stopped (its
    # worker died), `retries` times at most RUN_RETRY_LIMIT.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    retries = models.PositiveSmallIntegerField(default=0)
    # What the model asked and the guards refused (reviews.llm.apply), one line each.
    refused = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "agent"], name="one_agent_run_per_agent")
        ]

    def __str__(self) -> str:
        return f"{self.agent} on run {self.run_id}"
