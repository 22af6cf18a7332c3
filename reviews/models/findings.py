"""What a run found: Finding rows, their Severity, and findings_of (the findings a run
shows, its own or those of the run it reuses)."""

from __future__ import annotations

from django.db import models

from reviews.engine import findings
from reviews.engine.history import compare as history
from reviews.models.runs import ReviewRun

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
    # No index of its own on category or severity either: every reader filters by run
    # first (the tally index below), and each cost a 1M review's write about 0.3 s.
    category = models.CharField(max_length=32)
    kind = models.CharField(max_length=64)
    severity = models.CharField(max_length=16, choices=Severity.choices)
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
    # Indexed for a dismissal's findings across a dataset's runs (Meta.indexes: a plain
    # btree, not db_index's second, LIKE one on Postgres, which no reader uses).
    fingerprint = models.CharField(max_length=16, blank=True, default="")
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
            models.Index(fields=["fingerprint"], name="finding_fingerprint"),
        ]

    def __str__(self) -> str:
        return self.title


def findings_of(run: ReviewRun) -> models.QuerySet[Finding]:
    """The findings a run shows. Every reader (run page, JSON, CSV, admin, report) reads
    through here: a cached or failback run has no rows of its own, it shows those of
    the run it reuses."""
    return Finding.objects.filter(run_id=run.findings_run_id)
