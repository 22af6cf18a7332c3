"""API tokens (per user, stored hashed) and idempotency keys of uploads."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from workspaces.models import default_workspace_id


class ApiToken(models.Model):
    """A bearer token that acts as its user (never as staff) within its scopes. Only
    its sha256 is kept: the token itself is shown once, when it is created."""

    class Scope(models.TextChoices):
        UPLOAD = "upload"
        READ = "read"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    # The one workspace the token acts for (its user must still be a member).
    workspace = models.ForeignKey(
        "workspaces.Workspace",
        on_delete=models.CASCADE,
        related_name="api_tokens",
        default=default_workspace_id,
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16)  # the token's first characters, to tell tokens apart
    digest = models.CharField(max_length=64, unique=True)  # sha256 hex of the token
    scopes = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "name"],
                condition=Q(revoked_at__isnull=True),
                name="one_active_api_token_name_per_user",
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes


class IdempotencyKey(models.Model):
    """The first upload sent with an `Idempotency-Key`: a retry with the same key gets
    its answer instead of a second batch. `batch` is empty while the first request is
    still being handled."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    key = models.CharField(max_length=255)
    request_sha256 = models.CharField(max_length=64)  # files, dataset and as-of of the request
    batch = models.ForeignKey("reviews.Batch", null=True, blank=True, on_delete=models.CASCADE)
    run = models.ForeignKey("reviews.ReviewRun", null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="one_idempotency_key_per_user")
        ]

    def __str__(self) -> str:
        return self.key
