"""A dataset's review policy, version by version (PolicyVersion), and a workspace's
shared rule sets (RuleSet)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from reviews.models.datasets import Dataset


class PolicyVersion(models.Model):
    """One version of a dataset's review policy (reviews.engine.history.policy.Policy as data):
    who made it, when and why. The newest is the dataset's policy; a restore is a new
    version with an older one's policy."""

    class Source(models.TextChoices):
        MANUAL = "manual"
        PROPOSAL = "proposal"  # a tuning proposal applied by a person
        AUTO = "auto"  # a proposal applied by itself (its replay hid only dismissed ones)
        RESTORE = "restore"

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="policies")
    number = models.PositiveIntegerField()
    policy = models.JSONField(default=dict)
    reason = models.TextField()
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.MANUAL)
    proposal = models.CharField(max_length=300, blank=True)  # the proposal's id
    replay = models.JSONField(default=dict, blank=True)  # the proposal's replay
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="policy_versions",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["dataset", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "number"], name="one_policy_version_number")
        ]

    def __str__(self) -> str:
        return f"{self.dataset_id} policy v{self.number}"


class RuleSet(models.Model):
    """One version of a workspace's shared rule set (docs/rules.md#workspace-rule-sets):
    team rules many datasets use. A dataset's policy holds a copy of the version it uses,
    so saving a new version makes a new policy version for each dataset using the set."""

    workspace = models.ForeignKey(
        "workspaces.Workspace", on_delete=models.CASCADE, related_name="rule_sets"
    )
    name = models.CharField(max_length=64)
    number = models.PositiveIntegerField()
    rules = models.JSONField(default=list)  # [TeamRule.as_data(), ...]
    reason = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["workspace", "name", "-number"]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "name", "number"], name="one_rule_set_version_number"
            )
        ]

    def __str__(self) -> str:
        return f"rule set {self.name} v{self.number}"
