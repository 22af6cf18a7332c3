"""What was uploaded: a Batch (one sync's export, as parsed) and its BatchFiles (the
bytes as received)."""

from __future__ import annotations

import os

from django.conf import settings
from django.db import models

from reviews.models.datasets import Dataset
from workspaces.models import default_workspace_id


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
    # order give the same key (reviews.orchestration.serving.decide.content_key). Empty
    # until accepted.
    content_key = models.CharField(max_length=64, blank=True, db_index=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RECEIVED)
    errors = models.JSONField(default=list, blank=True)  # why it was rejected
    source = models.CharField(max_length=50, blank=True)
    companies = models.IntegerField(default=0)
    contacts = models.IntegerField(default=0)
    deals = models.IntegerField(default=0)
    leads = models.IntegerField(default=0)  # Salesforce's; 0 for a HubSpot batch
    as_of = models.DateTimeField(null=True, blank=True)
    # Where the as-of time came from: given, exportedAt, last_modified (the newest Last
    # Modified Date of a CSV export) or upload (the upload time).
    as_of_source = models.CharField(max_length=16, blank=True)
    # What the export did not carry: lists with no file, and columns not read (by file).
    partial = models.JSONField(default=list, blank=True)
    ignored_columns = models.JSONField(default=dict, blank=True)
    # Columns a rule reads that the export lacks, and the kinds each switched off
    # (reviews.engine.coverage.missing_columns): the run is partial, its verdict capped.
    missing_columns = models.JSONField(default=list, blank=True)
    # Its own column (not derived through the dataset, which a batch may lack): every
    # list, search and permission check of runs and findings filters on it.
    workspace = models.ForeignKey(
        "workspaces.Workspace",
        on_delete=models.PROTECT,
        related_name="batches",
        default=default_workspace_id,
    )
    # The dataset's pipelines this batch was read with (a copy: a later change to the
    # dataset's does not change a stored review), and where deals' open/won/lost state
    # came from: stage_source the first of dataset, export, state_columns, default that
    # described a deal; stage_sources how many deals each (and "unknown").
    pipelines = models.JSONField(default=list, blank=True)
    stage_source = models.CharField(max_length=16, blank=True)
    stage_sources = models.JSONField(default=dict, blank=True)
    # The syncs of one CRM; a batch without a dataset is reviewed on its own.
    dataset = models.ForeignKey(
        Dataset, null=True, blank=True, on_delete=models.PROTECT, related_name="batches"
    )
    # A dataset's sync only (reviews.orchestration.dataset.arrival): a few of its record
    # ids by list, which a later sync compared with it looks for, and what its arrival
    # called for saying ([{"code", "message"}]: uploaded_late, unfamiliar_records).
    record_sample = models.JSONField(default=dict, blank=True)
    warnings = models.JSONField(default=list, blank=True)
    # How full each property is, per object (reviews.engine.tables.profile.fill_rates):
    # filled by the first review of the batch; {} until then.
    fill_rates = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # What the upload asked for beside its files, kept as asked when it is stored
    # (reviews.orchestration.intake.entry): whoever reads it (the web, a worker, the
    # sweep sending it again) reads it with these. `as_of` above is the effective time.
    requested_as_of = models.DateTimeField(null=True, blank=True)
    requested_dataset = models.CharField(max_length=200, blank=True)  # a checked name
    # The rate-limit keys of the request (its user and address): kept until it is read.
    rate_keys = models.JSONField(null=True, blank=True)
    # The one claim of an upload (reviews.orchestration.intake.entry): the upload is in
    # the database if a batch holds its key, else in the spool, which keeps the same key;
    # so a store whose commit went through while its answer was lost is imported once.
    intake_key = models.CharField(max_length=32, null=True, blank=True, unique=True)

    class Meta:
        verbose_name_plural = "batches"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Batch {self.pk} ({self.file_name})"

    @property
    def counts(self) -> dict[str, int]:
        """The records of each list; leads only where there are any (as the parsed
        batch's counts): a HubSpot batch's are unchanged."""
        counts = {"companies": self.companies, "contacts": self.contacts, "deals": self.deals}
        if self.leads:
            counts["leads"] = self.leads
        return counts

    @property
    def is_partial(self) -> bool:
        """The export left out a list, or a column a rule reads (docs/output.md)."""
        return bool(self.partial or self.missing_columns)

    @property
    def title(self) -> str:
        """How pages name the batch: its own id, else its file name, with the files of a
        CSV export folded into one name ("hubspot-{companies,contacts,deals}.csv")."""
        return self.external_id or self.files_title

    @property
    def files_title(self) -> str:
        return fold_names(self.file_name.split(", "))


def fold_names(names: list[str]) -> str:
    """'export-{companies,contacts,deals}-2026-08-01.csv' for names sharing a start and
    an end; 'a.csv + 2 more' when they share little; the name itself when alone."""
    if len(names) < 2:
        return names[0] if names else ""
    start = os.path.commonprefix(names)
    while start and start[-1].isalnum():  # cut at a separator: never inside a word
        start = start[:-1]
    end = os.path.commonprefix([n[len(start) :][::-1] for n in names])[::-1]
    while end and end[0].isalnum():
        end = end[1:]
    if len(start) + len(end) < 4:
        return f"{names[0]} + {len(names) - 1} more"
    middles = [n[len(start) : len(n) - len(end)] for n in names]
    return f"{start}{{{','.join(middles)}}}{end}"


class BatchFile(models.Model):
    """One uploaded file, byte for byte as received (a CSV export has three): its bytes
    in the store under `key` (revreview/store.py); a file stored
    before the store kept uploads has them in `data`."""

    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="files")
    name = models.CharField(max_length=500)
    sha256 = models.CharField(max_length=64)
    size_bytes = models.BigIntegerField()
    key = models.CharField(max_length=300, blank=True, default="")
    data = models.BinaryField(null=True, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name
