"""What the factory stores: uploads, runs, each agent's run, findings, verdicts."""

from __future__ import annotations

import os

from django.conf import settings
from django.core.validators import RegexValidator, URLValidator
from django.db import models

from reviews.engine import findings
from reviews.engine.history import compare as history
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
    # The review configuration this run used
    # (reviews.orchestration.serving.decide.config_fingerprint), and
    # for a cached or failback run, the finished run whose findings it serves. Those
    # findings are read in place (findings_of), not copied, so that run is protected.
    config_fingerprint = models.CharField(max_length=64, blank=True, db_index=True)
    reused_run = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="reused_by"
    )
    # Dataset history (docs/history.md): the run this one was compared with (chosen when
    # the run is made, so a re-run compares with the same one), the baseline's findings
    # gone now, and the findings the team dismissed (each with who and why).
    baseline_run = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="compared_by"
    )
    resolved = models.JSONField(default=list, blank=True)
    suppressed = models.JSONField(default=list, blank=True)
    # What still stands in the dataset after this sync, whatever decided the verdict
    # (reviews.engine.history.compare.standing: state, critical, warning, amount, since_run);
    # {} for runs made before it was kept. A served run carries its source's.
    standing = models.JSONField(default=dict, blank=True)
    # The batch's health score (reviews.engine.health: 0.0 to 100.0, None for an empty
    # batch or a run that did not finish), kept so the home page's trends read one column.
    health = models.DecimalField(max_digits=4, decimal_places=1, null=True, blank=True)
    # What each of the policy's team rules did: [{"id", "object", "severity", "status"
    # ("ran" or "could_not_run"), "count", "why"}] (reviews.engine.team_rules.run).
    team_rules = models.JSONField(default=list, blank=True)
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
    # When its start task reached the broker (None: the dispatch failed, or not yet),
    # and how often the sweep sent it again (reviews.orchestration.run.sweep).
    dispatched_at = models.DateTimeField(null=True, blank=True)
    retries = models.PositiveSmallIntegerField(default=0)
    # Daily-budget tokens reserved for this run's model calls when it was served
    # (ledger.budget.reserve_for_run); its calls draw on them, the rest is released
    # when it finishes.
    reserved_tokens = models.PositiveIntegerField(default=0)
    # The dataset's review policy version the run used (None: the engine's rules as set).
    policy_version = models.ForeignKey(
        "PolicyVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="runs"
    )

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
    # Beaten while it runs; the sweep re-dispatches an agent whose beat stopped (its
    # worker died), `retries` times at most RUN_RETRY_LIMIT.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    retries = models.PositiveSmallIntegerField(default=0)
    # What the model asked and the guards refused (reviews.llm.apply), one line each.
    refused = models.JSONField(default=list, blank=True)

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

    class Status(models.TextChoices):
        NEW = history.NEW  # not in the baseline run (every finding of a first sync)
        OPEN = history.OPEN  # the baseline run had it too

    # No index of its own: the (run, position) index below serves every look-up by run,
    # and a second one on run alone cost a third of the time of writing 180k findings.
    run = models.ForeignKey(
        ReviewRun, on_delete=models.CASCADE, related_name="findings", db_index=False
    )
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
    # ISO 4217 code of amount_at_risk; "mixed" (and no amount) when it spans currencies.
    currency = models.CharField(max_length=8, blank=True)
    source = models.CharField(max_length=8, choices=Source.choices, default=Source.RULE)
    # reviews.engine.history.compare.fingerprint: the same problem keeps it from sync to sync.
    fingerprint = models.CharField(max_length=16, blank=True, default="", db_index=True)
    # Owners and record sources of the records it names (RawFinding): who fixes it.
    owners = models.JSONField(default=list, blank=True)
    record_sources = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.NEW)
    first_seen = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "position"]
        indexes = [
            models.Index(fields=["run", "position"]),
            # Search by record id (reviews.search) uses finding_record_ids_gin, a GIN index
            # on Postgres only: created by migration 0004 and kept out of this list
            # (0015), so SQLite's table rebuilds never copy it as a plain index.
            # The run page's tally by kind (and new/open status) and its kind filter, read
            # from the index alone: 154k findings tallied in 10 ms, not 230.
            models.Index(
                fields=["run", "kind", "severity", "category", "status"],
                name="finding_run_kind_tally",
            ),
        ]

    def __str__(self) -> str:
        return self.title


def findings_of(run: ReviewRun) -> models.QuerySet[Finding]:
    """The findings a run shows. Every reader (run page, JSON, CSV, admin, report) reads
    through here: a cached or failback run has no rows of its own, it shows those of
    the run it reuses."""
    return Finding.objects.filter(run_id=run.findings_run_id)


class Verdict(models.Model):
    # Display labels are VERDICT_LABELS (below), not the choices' labels: changing
    # choices would cost a migration for no change in the data.
    class Decision(models.TextChoices):
        APPROVE = "approve"
        APPROVE_WITH_COMMENTS = "approve_with_comments"
        REQUEST_CHANGES = "request_changes"

    run = models.OneToOneField(ReviewRun, on_delete=models.CASCADE, related_name="verdict")
    decision = models.CharField(max_length=32, choices=Decision.choices)
    summary = models.TextField()
    pipeline_at_risk = models.DecimalField(max_digits=18, decimal_places=2, default=0)
    # {currency: "amount"}: the pipeline at risk per currency, never summed across them.
    pipeline_by_currency = models.JSONField(default=dict, blank=True)
    # Break glass: the original decision stays; the override is recorded beside it.
    overridden_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    override_reason = models.TextField(blank=True)
    overridden_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.label} (run {self.run_id})"

    @property
    def original_label(self) -> str:
        """The review's own verdict, as a person reads it."""
        return VERDICT_LABELS[self.decision]

    @property
    def label(self) -> str:
        """What counts, saying so when break glass overrode the review."""
        if self.is_overridden:
            return f"Approved by break glass (was: {self.original_label})"
        return self.original_label

    @property
    def is_overridden(self) -> bool:
        return self.overridden_at is not None

    @property
    def effective_decision(self) -> str:
        return self.Decision.APPROVE if self.is_overridden else self.decision


VERDICT_LABELS = {
    Verdict.Decision.APPROVE: "Approved",
    Verdict.Decision.APPROVE_WITH_COMMENTS: "Approved with comments",
    Verdict.Decision.REQUEST_CHANGES: "Changes requested",
}


class Dismissal(models.Model):
    """The team's "this is not a problem" for one fingerprint of one dataset. It lasts
    until undone; undoing keeps the row (who undid it, when), and a later dismissal of
    the same fingerprint is a new row."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="dismissals")
    fingerprint = models.CharField(max_length=16)
    # The finding as the team saw it when dismissing it.
    category = models.CharField(max_length=32)
    kind = models.CharField(max_length=64)
    title = models.CharField(max_length=500)
    reason = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="dismissals",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    undone_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="undone_dismissals",
    )
    undone_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "fingerprint"],
                condition=models.Q(undone_at__isnull=True),
                name="one_active_dismissal_per_fingerprint",
            )
        ]

    def __str__(self) -> str:
        return f"{self.fingerprint} in {self.dataset_id}: {self.reason[:40]}"

    @property
    def is_active(self) -> bool:
        return self.undone_at is None


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


class DismissedProposal(models.Model):
    """A tuning proposal the team turned down: not proposed again for its dataset."""

    dataset = models.ForeignKey(
        Dataset, on_delete=models.CASCADE, related_name="dismissed_proposals"
    )
    proposal = models.CharField(max_length=300)
    reason = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["dataset", "proposal"], name="one_dismissed_proposal")
        ]

    def __str__(self) -> str:
        return f"{self.proposal} turned down in {self.dataset_id}"


# Its own module (reviews/applied_merges.py), registered with the app through here.
from reviews.applied_merges import AppliedMerge  # noqa: E402, F401
