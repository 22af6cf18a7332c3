"""Webhook subscriptions of a dataset, one delivery per (subscription, run), and every
attempt at delivering it."""

from __future__ import annotations

from django.db import models

from alerts.destinations import URLSyntax


class Trigger(models.TextChoices):
    """What a subscription can watch: a verdict, or a run that went wrong."""

    APPROVE = "approve"
    APPROVE_WITH_COMMENTS = "approve_with_comments"
    REQUEST_CHANGES = "request_changes"
    DEGRADED = "degraded"  # a specialist failed; the verdict was reached without it
    FAILED = "failed"  # the run itself failed
    # Weekly: the dataset's tuning proposals and root causes of recurring problems
    # (docs/history.md); not tied to a run.
    WEEKLY_DIGEST = "weekly_digest"


def default_triggers() -> list[str]:
    return [Trigger.REQUEST_CHANGES]


class WebhookSubscription(models.Model):
    class Format(models.TextChoices):
        JSON = "json", "revreview JSON"
        SLACK = "slack", "Slack-compatible ({text: ...})"

    dataset = models.ForeignKey(
        "reviews.Dataset", on_delete=models.CASCADE, related_name="webhooks"
    )
    # A URL, checked as Django checks one except that an allow-listed one-word host
    # (a compose service, `hooks`) passes; where it may lead is alerts.destinations'.
    url = models.CharField(max_length=2000, validators=[URLSyntax()])
    # Signs each body (HMAC-SHA256). Kept as given: signing needs it; never shown again.
    secret = models.CharField(max_length=200)
    triggers = models.JSONField(default=default_triggers)
    payload_format = models.CharField(max_length=8, choices=Format.choices, default=Format.JSON)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["dataset", "id"]

    def __str__(self) -> str:
        return f"{self.dataset} → {self.url}"


class WebhookDelivery(models.Model):
    """One message to one subscription about one run, until it is delivered or the
    retry window closes. The body is fixed when it is made, so every retry sends the
    same bytes (with a fresh signature timestamp)."""

    class Status(models.TextChoices):
        PENDING = "pending"  # waiting for its next attempt (next_attempt_at)
        SENDING = "sending"  # an attempt is out
        DELIVERED = "delivered"
        FAILED = "failed"  # gave up after the retry window

    subscription = models.ForeignKey(
        WebhookSubscription, on_delete=models.CASCADE, related_name="deliveries"
    )
    # The run it alerts about; none for a weekly digest (then `digest` names its week).
    run = models.ForeignKey(
        "reviews.ReviewRun", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    digest = models.CharField(max_length=10, blank=True)  # ISO week, "2026-W48"
    triggers = models.JSONField(default=list)  # what of the subscription's list the run hit
    body = models.TextField()  # the JSON sent, as sent
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True
    )
    attempts = models.IntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True, db_index=True)
    claimed_at = models.DateTimeField(null=True, blank=True)  # when its last attempt went out
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "webhook deliveries"
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["subscription", "run"], name="one_webhook_delivery_per_run"
            ),
            models.UniqueConstraint(
                fields=["subscription", "digest"],
                condition=~models.Q(digest=""),
                name="one_webhook_digest_per_week",
            ),
        ]

    def __str__(self) -> str:
        return f"delivery {self.pk}: run {self.run_id} → {self.subscription.url}"


class WebhookAttempt(models.Model):
    delivery = models.ForeignKey(
        WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_log"
    )
    number = models.IntegerField()  # 1 for the first attempt
    started_at = models.DateTimeField()
    latency_ms = models.IntegerField()
    response_code = models.IntegerField(null=True, blank=True)  # none if no response came
    ok = models.BooleanField()
    # What went wrong, in our words: refused, unreachable, the deadline, cut short.
    error = models.TextField(blank=True)
    # The start of a failed answer's body: printable, at most 200 characters
    # (transport.EXCERPT_CHARS), so no other service's reply is ever kept whole.
    excerpt = models.CharField(max_length=200, blank=True)
    # The address the attempt connected to (the one checked, never a fresh resolution);
    # empty if it connected nowhere: refused, unresolvable, unreachable, cut short.
    address = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["delivery", "number"]
        constraints = [
            models.UniqueConstraint(fields=["delivery", "number"], name="one_row_per_attempt")
        ]

    def __str__(self) -> str:
        return f"attempt {self.number} of delivery {self.delivery_id}"
