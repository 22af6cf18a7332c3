"""What the factory stores: uploads, runs, each agent's run, findings, verdicts."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from reviews.engine import findings


class Batch(models.Model):
    class Status(models.TextChoices):
        RECEIVED = "received"  # stored, not parsed yet
        ACCEPTED = "accepted"
        REJECTED = "rejected"

    external_id = models.CharField(max_length=200, blank=True)  # the batch's own "id"
    file_name = models.CharField(max_length=500)
    sha256 = models.CharField(max_length=64, db_index=True)  # of the upload's bytes
    size_bytes = models.BigIntegerField()
    # Hash of the canonicalised parsed batch: the same records in any key or record
    # order give the same key (reviews.orchestration.serving.content_key). Empty until accepted.
    content_key = models.CharField(max_length=64, blank=True, db_index=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RECEIVED)
    errors = models.JSONField(default=list, blank=True)  # why it was rejected
    source = models.CharField(max_length=50, blank=True)
    companies = models.IntegerField(default=0)
    contacts = models.IntegerField(default=0)
    deals = models.IntegerField(default=0)
    as_of = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        verbose_name_plural = "batches"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Batch {self.pk} ({self.file_name})"

    @property
    def counts(self) -> dict[str, int]:
        return {"companies": self.companies, "contacts": self.contacts, "deals": self.deals}


class BatchFile(models.Model):
    """One uploaded file, byte for byte as received (a CSV export has three)."""

    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="files")
    name = models.CharField(max_length=500)
    sha256 = models.CharField(max_length=64)
    size_bytes = models.BigIntegerField()
    data = models.BinaryField()

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name


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
    # The review configuration this run used (reviews.orchestration.serving.config_fingerprint), and
    # for a cached or failback run, the finished run whose findings it serves. Those
    # findings are read in place (findings_of), not copied, so that run is protected.
    config_fingerprint = models.CharField(max_length=64, blank=True, db_index=True)
    reused_run = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="reused_by"
    )
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

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "agent"], name="one_agent_run_per_agent")
        ]

    def __str__(self) -> str:
        return f"{self.agent} on run {self.run_id}"


# The detectors' severities, in their order (most severe first): views rank by it.
Severity = models.TextChoices("Severity", [(s.name, s.value) for s in findings.Severity])


class Finding(models.Model):
    class Source(models.TextChoices):
        RULE = "rule"
        MODEL = "model"

    run = models.ForeignKey(ReviewRun, on_delete=models.CASCADE, related_name="findings")
    position = models.IntegerField()  # the coordinator's order: severity, then money
    category = models.CharField(max_length=32, db_index=True)
    kind = models.CharField(max_length=64)
    severity = models.CharField(max_length=16, choices=Severity.choices, db_index=True)
    title = models.CharField(max_length=500)
    detail = models.TextField()
    record_ids = models.JSONField(default=list)
    suggested_fix = models.TextField(blank=True)
    confidence = models.FloatField(default=1.0)
    amount_at_risk = models.DecimalField(max_digits=18, decimal_places=2, null=True, blank=True)
    source = models.CharField(max_length=8, choices=Source.choices, default=Source.RULE)

    class Meta:
        ordering = ["run", "position"]
        indexes = [
            models.Index(fields=["run", "position"]),
            # The run page's tally by kind and its kind filter, read from the index alone.
            models.Index(fields=["run", "kind", "severity", "category"]),
        ]

    def __str__(self) -> str:
        return self.title


def findings_of(run: ReviewRun) -> models.QuerySet[Finding]:
    """The findings a run shows. Every reader (run page, JSON, CSV, admin, report) reads
    through here: a cached or failback run has no rows of its own, it shows those of
    the run it reuses."""
    return Finding.objects.filter(run_id=run.findings_run_id)


class Verdict(models.Model):
    class Decision(models.TextChoices):
        APPROVE = "approve"
        APPROVE_WITH_COMMENTS = "approve_with_comments"
        REQUEST_CHANGES = "request_changes"

    run = models.OneToOneField(ReviewRun, on_delete=models.CASCADE, related_name="verdict")
    decision = models.CharField(max_length=32, choices=Decision.choices)
    summary = models.TextField()
    pipeline_at_risk = models.DecimalField(max_digits=18, decimal_places=2, default=0)
    # Break glass: the original decision stays; the override is recorded beside it.
    overridden_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    override_reason = models.TextField(blank=True)
    overridden_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.effective_decision} (run {self.run_id})"

    @property
    def is_overridden(self) -> bool:
        return self.overridden_at is not None

    @property
    def effective_decision(self) -> str:
        return self.Decision.APPROVE if self.is_overridden else self.decision
