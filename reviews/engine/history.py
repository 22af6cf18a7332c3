"""Dataset history (docs/history.md) on plain data: fingerprints, and the comparison of a
sync's findings with its baseline's (new / open / resolved), with the team's dismissals
set aside as suppressed. Every step is a dict look-up by fingerprint, so a comparison is
linear in the number of findings, whatever the length of the history."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from reviews.engine.batch import DEFAULT_CURRENCY
from reviews.engine.coordinator import Review, decide
from reviews.engine.findings import RawFinding, amounts_by_currency
from reviews.engine.money import format_amounts

NEW = "new"
OPEN = "open"


def fingerprint(category: str, kind: str, record_ids: Iterable[str]) -> str:
    """The same problem keeps its fingerprint across exports: CRM ids are stable, and
    title, detail, money and record order do not enter it."""
    text = f"{category}|{kind}|" + ",".join(sorted(record_ids))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def fingerprint_of(finding: RawFinding) -> str:
    return fingerprint(finding.category, finding.kind, finding.record_ids)


@dataclass(frozen=True, slots=True)
class Past:
    """A finding of the baseline run, as much of it as the comparison needs."""

    fingerprint: str
    first_seen: datetime | None
    category: str = ""
    kind: str = ""
    severity: str = ""
    title: str = ""
    record_ids: tuple[str, ...] = ()

    def resolved_entry(self) -> dict:
        """docs/history.md's `run.resolved` item."""
        return {
            "fingerprint": self.fingerprint,
            "category": self.category,
            "kind": self.kind,
            "severity": self.severity,
            "title": self.title,
            "record_ids": list(self.record_ids),
        }


@dataclass(slots=True)
class Baseline:
    """The baseline run's findings and suppressed findings, by fingerprint."""

    run_id: int | None = None
    findings: dict[str, Past] = field(default_factory=dict)
    suppressed: dict[str, Past] = field(default_factory=dict)

    def get(self, key: str) -> Past | None:
        return self.findings.get(key) or self.suppressed.get(key)


@dataclass(frozen=True, slots=True)
class Dismissed:
    """An active dismissal of the dataset: who and why."""

    by: str
    reason: str


@dataclass(slots=True)
class Marked:
    """A finding with its history fields."""

    finding: RawFinding
    fingerprint: str
    status: str  # NEW or OPEN
    first_seen: datetime | None
    dismissal: Dismissed | None = None  # set on suppressed findings only


@dataclass(slots=True)
class Comparison:
    findings: list[Marked]  # in the order given
    suppressed: list[Marked]
    resolved: list[dict]
    baseline_run: int | None = None

    def count(self, status: str) -> int:
        return sum(1 for m in self.findings if m.status == status)

    def deciding(self, verdict_scope: str) -> list[RawFinding]:
        """The findings that decide the verdict: only new ones under scope `new`."""
        return [m.finding for m in self.findings if verdict_scope != NEW or m.status == NEW]


def split_suppressed(
    findings: list[RawFinding], dismissed: Mapping[str, Dismissed]
) -> tuple[list[RawFinding], list[RawFinding]]:
    """(kept, suppressed): a dismissed problem is still detected, but set aside."""
    kept: list[RawFinding] = []
    suppressed: list[RawFinding] = []
    for finding in findings:
        (suppressed if fingerprint_of(finding) in dismissed else kept).append(finding)
    return kept, suppressed


def compare(
    findings: list[RawFinding],
    suppressed: list[RawFinding],
    baseline: Baseline | None,
    as_of: datetime,
    dismissed: Mapping[str, Dismissed] | None = None,
) -> Comparison:
    """Mark each finding new or open against the baseline (open: its fingerprint is
    among the baseline's findings or suppressed findings) and list the baseline's
    findings whose fingerprints are gone now as resolved. Without a baseline (the first
    sync, or a batch without a dataset) everything is new, first seen now."""
    baseline = baseline or Baseline()
    dismissed = dismissed or {}

    def mark(finding: RawFinding) -> Marked:
        key = fingerprint_of(finding)
        past = baseline.get(key)
        return Marked(
            finding=finding,
            fingerprint=key,
            status=OPEN if past else NEW,
            first_seen=(past.first_seen or as_of) if past else as_of,
            dismissal=dismissed.get(key),
        )

    marked = [mark(f) for f in findings]
    hidden = [mark(f) for f in suppressed]
    present = {m.fingerprint for m in marked} | {m.fingerprint for m in hidden}
    resolved = [
        past.resolved_entry() for key, past in baseline.findings.items() if key not in present
    ]
    return Comparison(marked, hidden, resolved, baseline.run_id)


def history_sentences(comparison: Comparison) -> str:
    """'3 new problems; 41 still open; 5 resolved since the last sync. The new ones touch
    $12,000 of pipeline across 2 deals. 1 dismissed problem is suppressed.'"""
    new, still_open = comparison.count(NEW), comparison.count(OPEN)
    since = "since the last sync" if comparison.baseline_run else "(first sync of this dataset)"
    sentences = [
        f"{_plural(new, 'new problem')}; {still_open:,} still open; "
        f"{len(comparison.resolved):,} resolved {since}."
    ]
    exposure: dict[str, Decimal] = {}
    currencies: dict[str, str] = {}
    for m in comparison.findings:
        if m.status == NEW:
            exposure.update(m.finding.exposure)
            currencies.update(m.finding.deal_currencies)
    if exposure:
        # Per currency, never added up across currencies.
        totals = {
            code or DEFAULT_CURRENCY: amount
            for code, amount in amounts_by_currency(exposure, currencies).items()
        }
        sentences.append(
            f"The new ones touch {format_amounts(totals)} of pipeline across "
            f"{_plural(len(exposure), 'deal')}."
        )
    if comparison.suppressed:
        count = len(comparison.suppressed)
        verb = "is" if count == 1 else "are"
        sentences.append(f"{_plural(count, 'dismissed problem')} {verb} suppressed.")
    return " ".join(sentences)


def _plural(n: int, singular: str) -> str:
    return f"{n:,} {singular if n == 1 else singular + 's'}"


def apply_scope(review: Review, comparison: Comparison, verdict_scope: str) -> Review:
    """A dataset batch's review: the verdict on the findings its dataset's scope counts
    (suppressed ones never count), the summary with what changed since the last sync."""
    review.decision = decide(comparison.deciding(verdict_scope))
    review.summary = f"{review.summary} {history_sentences(comparison)}".strip()
    return review


def suppressed_entry(marked: Marked) -> dict:
    """A `suppressed` item of docs/history.md: the finding, its history fields, and the
    dismissal's who and why. JSON-safe (the amount as a string, never a float)."""
    f = marked.finding
    return {
        "category": f.category,
        "kind": f.kind,
        "severity": f.severity,
        "title": f.title,
        "detail": f.detail,
        "record_ids": f.record_ids,
        "suggested_fix": f.suggested_fix,
        "confidence": f.confidence,
        "amount_at_risk": str(f.amount_at_risk) if f.exposure else None,
        "source": f.source,
        "fingerprint": marked.fingerprint,
        "status": marked.status,
        "first_seen": marked.first_seen.isoformat() if marked.first_seen else None,
        "dismissed_by": marked.dismissal.by if marked.dismissal else "",
        "reason": marked.dismissal.reason if marked.dismissal else "",
    }
