"""SentTask: one finding of a run's to-do list sent to HubSpot as a task
(connectors.tasks), who asked, when, and what HubSpot answered. Its own module so
reviews/models.py stays readable; reviews.models imports it, so Django finds it there."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class SentTask(models.Model):
    """A finding becomes a HubSpot task once: a row that is not `failed` holds its
    (dataset, fingerprint) for good, and work is claimed with a conditional UPDATE
    (pending -> sending), so whatever is run again never creates a second task."""

    class Status(models.TextChoices):
        PENDING = "pending"  # recorded, not claimed yet
        SENDING = "sending"  # claimed: the create is on its way
        CREATED = "created"  # HubSpot answered 2xx: task_id
        FAILED = "failed"  # HubSpot refused it (4xx): nothing made; sent again only by name
        UNKNOWN = "unknown"  # no answer (timeout, 5xx): never resent; check in HubSpot

    dataset = models.ForeignKey(
        "reviews.Dataset", on_delete=models.PROTECT, related_name="sent_tasks"
    )
    run = models.ForeignKey(
        "reviews.ReviewRun", null=True, on_delete=models.SET_NULL, related_name="sent_tasks"
    )
    fingerprint = models.CharField(max_length=16)  # the finding's
    object_type = models.CharField(max_length=16)  # the record the task is on
    record_id = models.CharField(max_length=64)
    owner_id = models.CharField(max_length=64, blank=True)  # hubspot_owner_id sent, if any
    subject = models.CharField(max_length=255)
    body = models.TextField(blank=True)
    due = models.DateField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    task_id = models.CharField(max_length=64, blank=True)  # HubSpot's, once created
    # A person, always: tasks are never sent by a model or a schedule.
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="sent_tasks"
    )
    requested_at = models.DateTimeField(auto_now_add=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response = models.JSONField(null=True, blank=True)  # HubSpot's answer, as sent
    error = models.TextField(blank=True)

    class Meta:
        app_label = "reviews"
        ordering = ["-requested_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "fingerprint"],
                condition=~models.Q(status="failed"),
                name="task_each_finding_once",
            )
        ]

    def __str__(self) -> str:
        return f"task {self.fingerprint} on {self.object_type} {self.record_id} ({self.status})"
