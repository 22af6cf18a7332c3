"""Dataset: the syncs of one CRM, each batch reviewed against the previous one."""

from __future__ import annotations

from django.core.validators import RegexValidator, URLValidator
from django.db import models

from workspaces.models import default_workspace_id


class Dataset(models.Model):
    """The syncs of one CRM: each batch is reviewed against the dataset's previous one."""

    class VerdictScope(models.TextChoices):
        NEW = "new"  # only problems new since the last sync decide the verdict
        ALL = "all"  # every open problem decides it, as a batch without a dataset

    # A dataset's name is unique within its workspace (two teams may both sync "hubspot").
    workspace = models.ForeignKey(
        "workspaces.Workspace",
        on_delete=models.PROTECT,
        related_name="datasets",
        default=default_workspace_id,
    )
    name = models.CharField(max_length=200)
    verdict_scope = models.CharField(
        max_length=8, choices=VerdictScope.choices, default=VerdictScope.NEW
    )
    # The HubSpot account the dataset syncs (its Hub ID): the fix plan links each task to
    # the record's page in it. Set in the admin, or by a connection to the portal.
    hubspot_portal_id = models.CharField(
        "HubSpot portal id",
        max_length=20,
        blank=True,
        default="",
        validators=[RegexValidator(r"^[0-9]+$", "a HubSpot portal (Hub) id is a number")],
        help_text="The HubSpot account's Hub ID: tasks in the fix plan link to its records.",
    )
    # The Salesforce org the dataset syncs, its address (the instance_url its API answers):
    # the fix plan links each task to the record's page in it. Set in the admin, or by a
    # connection to the org.
    salesforce_url = models.CharField(
        "Salesforce org address",
        max_length=200,
        blank=True,
        default="",
        validators=[
            URLValidator(schemes=["https"], message="an org's https address"),
            RegexValidator(
                r"^https://[^/?#]+/?$",
                "the org's address alone, e.g. https://acme.my.salesforce.com (no path)",
            ),
        ],
        help_text="e.g. https://acme.my.salesforce.com: tasks in the fix plan link to its records.",
    )
    created = models.DateTimeField(auto_now_add=True)
    # Apply by itself a tuning proposal whose replay hides only dismissed findings
    # (docs/history.md); the version says so and one click reverts it.
    auto_apply_proposals = models.BooleanField(default=False)
    # The portal's deal pipelines, used for every later sync (docs/input.md): the JSON
    # batch's `pipelines` form, [{id, label, stages: [{id, label, closed, won,
    # probability}]}] (reviews.engine.ingest.pipelines). Who set them last, and when.
    pipelines = models.JSONField(default=list, blank=True)
    pipelines_from = models.CharField(
        max_length=16, blank=True
    )  # upload, api, cli, admin, connector
    pipelines_updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "name"], name="one_dataset_name_per_ws")
        ]

    def __str__(self) -> str:
        return self.name
