"""Workspaces: every batch, dataset, token and ledger row belongs to one; users are its
members with a role. Who may see what is decided in one place, workspaces.access."""

from __future__ import annotations

from django.conf import settings
from django.db import models

DEFAULT_WORKSPACE = "default"  # where data made without a workspace lands (migration, CLI)


class Role(models.TextChoices):
    """In rising order: each role may do what the ones before it may."""

    VIEWER = "viewer"  # read
    REVIEWER = "reviewer"  # and upload, re-run, dismiss
    ADMIN = "admin"  # and manage members, others' tokens, webhooks, dataset settings


ROLE_RANK = {role: rank for rank, role in enumerate(Role.values)}


class Workspace(models.Model):
    name = models.CharField(max_length=100, unique=True)
    # Model tokens (input + output) the workspace's reviews may use per UTC day; empty:
    # only the installation's DAILY_TOKEN_BUDGET applies. Set by a superuser.
    daily_token_budget = models.PositiveBigIntegerField(
        null=True,
        blank=True,
        help_text="Tokens per UTC day for this workspace's reviews (empty: no own limit); "
        "past it, reviews are served by failback.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="workspaces"
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["workspace", "user"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "user"], name="one_membership_per_user")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.workspace} ({self.role})"


def default_workspace() -> Workspace:
    """The workspace rows made without one land in (tests' factories, the CLI for an
    installation with one team). Never used to widen what a request may see."""
    workspace, _ = Workspace.objects.get_or_create(name=DEFAULT_WORKSPACE)
    return workspace


def default_workspace_id() -> int:
    """The model fields' default (a callable, so migrations do not freeze an id)."""
    return default_workspace().pk
