"""A dataset's connection to its CRM account (a provider of connectors/registry.py), its
pulls, and each pull's checkpoint."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

from connectors.registry import CONNECTORS, DEFAULT_PROVIDER, check_provider, provider_choices


class Connection(models.Model):
    """One per dataset. The token is kept encrypted (connectors.tokens) and never shown."""

    dataset = models.OneToOneField(
        "reviews.Dataset", on_delete=models.CASCADE, related_name="connection"
    )
    token_sealed = models.BinaryField()  # Fernet; never in a form, a page, a log or a run
    token_hint = models.CharField(max_length=16, blank=True)  # "pat-…a1b2": which token
    # The CRM, a key of connectors.registry.CONNECTORS. Choices are the registry's, read
    # when asked (a callable): a CRM added there needs no migration.
    provider = models.CharField(max_length=32, choices=provider_choices, default=DEFAULT_PROVIDER)
    portal_id = models.CharField(max_length=32)  # the CRM account's id (HubSpot's portal)
    company_currency = models.CharField(max_length=8, blank=True)
    time_zone = models.CharField(max_length=64, blank=True)
    account = models.JSONField(default=dict, blank=True)  # the rest of account-info details
    every_hours = models.PositiveIntegerField(default=24)
    full_every_days = models.PositiveIntegerField(default=7)
    active = models.BooleanField(default=True)
    next_pull_at = models.DateTimeField(null=True, blank=True, db_index=True)
    last_full_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    connected_by = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    def __str__(self) -> str:
        return f"{self.dataset} ← {self.provider_label} portal {self.portal_id}"

    def save(self, *args, **kwargs) -> None:
        # A connection no connector can serve is refused before it is stored.
        if self.provider not in CONNECTORS:
            check_provider(self.provider, where=f"connection of dataset {self.dataset}")
        super().save(*args, **kwargs)

    @property
    def provider_label(self) -> str:
        """The CRM's name ("HubSpot"); the key itself for one no longer registered."""
        return CONNECTORS.get(self.provider, (self.provider,))[0]

    def full_due(self, now=None) -> bool:
        now = now or timezone.now()
        return self.last_full_at is None or now - self.last_full_at >= timedelta(
            days=self.full_every_days
        )


class Pull(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    class Kind(models.TextChoices):
        FULL = "full"
        INCREMENTAL = "incremental"

    connection = models.ForeignKey(Connection, on_delete=models.CASCADE, related_name="pulls")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True
    )
    requested_by = models.CharField(max_length=32, default="schedule")  # schedule|page|api|cli
    # The modified-since time of an incremental pull (the last pull's start, less the
    # overlap); its as-of time is when it started.
    since = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    requests = models.PositiveIntegerField(default=0)
    waited_seconds = models.FloatField(default=0)  # of fetch_seconds, waiting on limits
    fetch_seconds = models.FloatField(default=0)  # asking the CRM, before the store
    in_flight_seconds = models.FloatField(default=0)  # of fetch_seconds, awaiting answers
    records = models.PositiveIntegerField(default=0)  # in the snapshot
    changed = models.PositiveIntegerField(default=0)  # fetched by this pull
    removed = models.PositiveIntegerField(default=0)  # archived or merged away
    step = models.CharField(max_length=64, blank=True)
    progress = models.JSONField(default=dict, blank=True)  # the checkpoint's cursor
    error = models.TextField(blank=True)
    batch = models.ForeignKey(
        "reviews.Batch", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    run = models.ForeignKey(
        "reviews.ReviewRun", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # One pull per dataset at a time: a second queued or running pull is refused.
            models.UniqueConstraint(
                fields=["connection"],
                condition=models.Q(status__in=["queued", "running"]),
                name="one_open_pull_per_connection",
            )
        ]

    def __str__(self) -> str:
        return f"pull {self.pk} of {self.connection.dataset}"

    @property
    def duration_seconds(self) -> float | None:
        if self.started_at and self.finished_at:
            return (self.finished_at - self.started_at).total_seconds()
        return None


class PullChunk(models.Model):
    """One answer of the CRM, as a pull keeps it (JSON), until the pull ends: what an
    interrupted pull resumes from. Deleted when the pull is done or failed for good."""

    pull = models.ForeignKey(Pull, on_delete=models.CASCADE, related_name="chunks")
    position = models.PositiveIntegerField()
    step = models.CharField(max_length=64)
    data = models.JSONField()

    class Meta:
        ordering = ["pull", "position"]
        constraints = [
            models.UniqueConstraint(fields=["pull", "position"], name="one_chunk_per_position")
        ]

    def __str__(self) -> str:
        return f"chunk {self.position} of pull {self.pull_id} ({self.step})"


class SentTask(models.Model):
    """One owner's to-do item of a fix plan sent to the CRM as a task
    (connectors/owner_tasks.py), who approved it and what the CRM answered. A finding is
    sent once per dataset: a row that is not `failed` holds its fingerprint for good,
    and the work is claimed with a conditional UPDATE (pending -> sending), so approving
    again, or twice at once, never makes a second task."""

    class Status(models.TextChoices):
        PENDING = "pending"  # recorded, not claimed yet
        SENDING = "sending"  # claimed: the request is on its way
        CREATED = "created"  # the CRM made it: `task_id`
        FAILED = "failed"  # the CRM refused it (4xx): nothing made, may be approved again
        UNKNOWN = "unknown"  # no answer (timeout, 5xx): never resent; check in the CRM

    dataset = models.ForeignKey(
        "reviews.Dataset", on_delete=models.PROTECT, related_name="sent_tasks"
    )
    run = models.ForeignKey(
        "reviews.ReviewRun", null=True, on_delete=models.SET_NULL, related_name="sent_tasks"
    )
    fingerprint = models.CharField(max_length=16)  # the finding's, from sync to sync
    object_type = models.CharField(max_length=16)  # companies, contacts, deals
    record_id = models.CharField(max_length=64)
    owner = models.CharField(max_length=255, blank=True)  # as the record names its owner
    subject = models.CharField(max_length=255)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    task_id = models.CharField(max_length=64, blank=True)  # the CRM's, once created
    # A person, always: tasks are never sent by a model or a schedule.
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="sent_tasks"
    )
    requested_at = models.DateTimeField(auto_now_add=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-requested_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "fingerprint"],
                condition=~models.Q(status="failed"),
                name="send_each_finding_once",
            )
        ]

    def __str__(self) -> str:
        return f"task for {self.fingerprint} on {self.object_type} {self.record_id} ({self.status})"
