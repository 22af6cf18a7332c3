"""AppliedMerge: one merge of a fix plan sent to HubSpot (connectors.merges),
who asked for it, when, and what HubSpot answered."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class AppliedMerge(models.Model):
    """A record merged away is merged once: a row that is not `failed` holds its
    (dataset, object, merged_id) for good, and work is claimed with a conditional
    UPDATE (pending -> applying), so a retried request never sends the merge twice."""

    class Status(models.TextChoices):
        PENDING = "pending"  # recorded, not claimed yet
        APPLYING = "applying"  # claimed: the request to HubSpot is on its way
        MERGED = "merged"  # HubSpot answered 2xx
        FAILED = "failed"  # HubSpot refused it (4xx): nothing merged, may be asked again
        UNKNOWN = "unknown"  # no answer (timeout, 5xx): never resent; check in HubSpot

    class Undo(models.TextChoices):
        """A merged record made again from the snapshot (connectors.undo), at most once:
        claimed with a conditional UPDATE ("" or failed -> undoing)."""

        NONE = "", "not undone"
        UNDOING = "undoing"  # claimed: the create is on its way
        UNDONE = "undone"  # made again: restored_id
        FAILED = "failed"  # HubSpot refused the create: nothing made; asked again only by name
        UNKNOWN = "unknown"  # no answer: never resent; check in HubSpot

    dataset = models.ForeignKey(
        "reviews.Dataset", on_delete=models.PROTECT, related_name="applied_merges"
    )
    run = models.ForeignKey(
        "reviews.ReviewRun", null=True, on_delete=models.SET_NULL, related_name="applied_merges"
    )
    object_type = models.CharField(max_length=16)  # companies, contacts, deals
    primary_id = models.CharField(max_length=64)  # the survivor's id when it was sent
    merged_id = models.CharField(max_length=64)
    # The record that survived, as HubSpot's answer named it: the primary, or for deals a
    # new record (the old ids its aliases); a later merge into it that gives it a new id
    # again updates it, so it names what the next pull holds. "" until answered.
    survivor_id = models.CharField(max_length=64, blank=True)
    fingerprint = models.CharField(max_length=16, blank=True)  # the duplicate finding's
    reason = models.TextField(blank=True)  # why primary_id survives, as the plan said
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    # A person, always: merges are never applied by a model or a schedule.
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="applied_merges"
    )
    requested_at = models.DateTimeField(auto_now_add=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response = models.JSONField(null=True, blank=True)  # HubSpot's answer, as sent
    error = models.TextField(blank=True)
    # Both records as HubSpot held them just before the merge was sent, read then:
    # {"primary": {...}, "merged": {...}}, each with every property and association
    # (connectors/hubspot/records.py). None: merged before snapshots were taken.
    snapshot = models.JSONField(null=True, blank=True)
    undo_status = models.CharField(max_length=16, choices=Undo.choices, blank=True, default="")
    # The merged record made again: merged_id is now this id (HubSpot gives a new one).
    restored_id = models.CharField(max_length=64, blank=True)
    undone_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="undone_merges",
    )
    undo_claimed_at = models.DateTimeField(null=True, blank=True)
    undone_at = models.DateTimeField(null=True, blank=True)
    # What the undo did and could not do: associations made, HubSpot's messages for the
    # ones it refused, the values HubSpot alone writes (not set again).
    undo_detail = models.JSONField(null=True, blank=True)
    undo_error = models.TextField(blank=True)

    class Meta:
        app_label = "reviews"
        ordering = ["-requested_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "object_type", "merged_id"],
                condition=~models.Q(status="failed"),
                name="merge_each_record_once",
            )
        ]

    def __str__(self) -> str:
        return f"{self.object_type} {self.merged_id} -> {self.primary_id} ({self.status})"
