"""Dataset history (docs/history.md) on plain data: fingerprints, and the comparison of a
sync's findings with its baseline's (new / open / resolved), with the team's dismissals
set aside as suppressed. Every step is a dict look-up by fingerprint, so a comparison is
linear in the number of findings, whatever the length of the history."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from reviews.engine.at_risk import money_at_risk
from reviews.engine.batch import DEFAULT_CURRENCY
from reviews.engine.coordinator import Review, decide
from reviews.engine.findings import MIXED, RawFinding, Severity
from reviews.engine.history import breakdown
from reviews.engine.money import format_amounts

NEW = "new"
OPEN = "open"
# A dataset's state after a sync (the webhook's `state`): what is still open in it.
CLEAN = "clean"
OPEN_WARNINGS = "open_warnings"
OPEN_CRITICAL = "open_critical"


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
    """An active dismissal of the dataset: who and why, and where it was made ("cli":
    the command line, which names a user only when told one)."""

    by: str
    reason: str
    via: str = ""


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
    unchecked: Collection[str] = (),
) -> Comparison:
    """Mark each finding new or open against the baseline (open: its fingerprint is
    among the baseline's findings or suppressed findings) and list the baseline's
    findings whose fingerprints are gone now as resolved. Without a baseline (the first
    sync, or a batch without a dataset) everything is new, first seen now. `unchecked`:
    kinds this sync's export switched off (a column missing): a baseline finding of one
    is not resolved, only not looked for."""
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
        past.resolved_entry()
        for key, past in baseline.findings.items()
        if key not in present and past.kind not in unchecked
    ]
    return Comparison(marked, hidden, resolved, baseline.run_id)


def history_sentences(comparison: Comparison) -> str:
    """'3 new problems; 41 still open; 5 resolved since the last sync. 1 dismissed
    problem is suppressed.' No money: the summary's one figure is the review's
    (reviews.engine.at_risk)."""
    new, still_open = comparison.count(NEW), comparison.count(OPEN)
    since = "since the last sync" if comparison.baseline_run else "(first sync of this dataset)"
    sentences = [
        f"{_plural(new, 'new problem')}; {still_open:,} still open; "
        f"{len(comparison.resolved):,} resolved {since}."
    ]
    if comparison.suppressed:
        count = len(comparison.suppressed)
        verb = "is" if count == 1 else "are"
        sentences.append(f"{_plural(count, 'dismissed problem')} {verb} suppressed.")
    return " ".join(sentences)


def _plural(n: int, singular: str) -> str:
    return f"{n:,} {singular if n == 1 else singular + 's'}"


def apply_scope(review: Review, comparison: Comparison, verdict_scope: str) -> Review:
    """A dataset batch's review: the verdict on the findings its dataset's scope counts
    (suppressed ones never count), the summary with what changed since the last sync.
    "Most urgent" names the finding that decided the verdict first, then the most urgent
    of those still open."""
    deciding = comparison.deciding(verdict_scope)
    review.decision = decide(deciding)
    if deciding and review.findings and deciding[0] is not review.findings[0]:
        old = f"Most urgent: {review.findings[0].title}."
        new = (
            f"Most urgent: {deciding[0].title} (new); most urgent still open: "
            f"{review.findings[0].title}."
        )
        review.summary = review.summary.replace(old, new, 1)
    review.summary = f"{review.summary} {history_sentences(comparison)}".strip()
    return review


def _most_severe(comparison: Comparison) -> list[Marked]:
    """The standing findings of the highest severity present: critical, else warning."""
    for severity in (Severity.CRITICAL, Severity.WARNING):
        found = [m for m in comparison.findings if m.finding.severity == severity]
        if found:
            return found
    return []


def since_carried(comparison: Comparison) -> bool:
    """Whether the longest-standing of the most severe findings came from an earlier
    sync (an open one), so `since_run` is that sync's run, not this one. A re-upload
    with the same as-of carries its first seen unchanged: the status tells them apart."""
    severe = [m for m in _most_severe(comparison) if m.first_seen]
    if not severe:
        return False
    oldest = min(m.first_seen for m in severe)
    return any(m.status == OPEN for m in severe if m.first_seen == oldest)


def standing(comparison: Comparison, deal_stages: Mapping[str, str] | None = None) -> dict:
    """What is still open in the dataset after this sync, whatever its verdict scope
    counted (docs/history.md, Standing problems): the critical and warning findings (new
    or open; suppressed ones are the team's call and do not stand), their money at risk
    (reviews.engine.at_risk: each deal once, never added across currencies), and `since`, the
    earliest first seen of the most severe of them. JSON-safe: amounts are strings.
    `since_run` (the sync that first reported it) is for the caller to fill in: the
    engine knows times, not runs. `deal_stages` (deal id -> stage label) adds the
    problems by stage."""
    severe = {Severity.CRITICAL: [], Severity.WARNING: []}
    for m in comparison.findings:
        if m.finding.severity in severe:
            severe[m.finding.severity].append(m)
    critical, warning = severe[Severity.CRITICAL], severe[Severity.WARNING]
    amounts = money_at_risk(m.finding for m in critical + warning).by_currency
    single = len(amounts) == 1
    firsts = [m.first_seen for m in _most_severe(comparison) if m.first_seen]
    by_stage = {}
    if deal_stages is not None:
        by_stage["by_stage"] = breakdown.tally_stages(
            (m.finding for m in critical + warning), deal_stages
        )
    state = OPEN_CRITICAL if critical else OPEN_WARNINGS if warning else CLEAN
    return {
        "state": state,
        "critical": len(critical),
        "warning": len(warning),
        "amount": str(next(iter(amounts.values()))) if single else None,
        "currency": next(iter(amounts)) if single else ("mixed" if amounts else None),
        "amounts": {code: str(amount) for code, amount in sorted(amounts.items())},
        "since": min(firsts).isoformat() if firsts else None,
        "since_run": None,
        "by_owner": breakdown.tally((m.finding for m in critical + warning), "owners"),
        "by_source": breakdown.tally((m.finding for m in critical + warning), "record_sources"),
        **by_stage,
    }


def standing_sentence(
    standing: Mapping, run_id: int | None = None, *, in_dataset: bool = True, money: bool = True
) -> str:
    """'1 critical still open since run #11: $410,000.' ('' when nothing stands), for
    the banner, the lists, the text report and the Slack message of run `run_id`. On the
    run that first reported them, and for a batch without a dataset (no earlier sync to
    stand since), they are simply open: '1 critical open: $410,000.' Without `money` for
    the verdict banner, whose summary already says what is at risk."""
    if not standing or not (standing.get("critical") or standing.get("warning")):
        return ""
    parts = []
    if standing.get("critical"):
        parts.append(f"{standing['critical']:,} critical")
    if standing.get("warning"):
        parts.append(_plural(standing["warning"], "warning"))
    since_run = standing.get("since_run")
    if not in_dataset or (since_run is not None and since_run == run_id):
        text = " and ".join(parts) + " open"
    else:
        text = " and ".join(parts) + " still open"
        if since_run:
            text += f" since run #{since_run}"
        elif standing.get("since"):
            text += f" since {standing['since'][:10]}"
    amounts = {code: Decimal(value) for code, value in (standing.get("amounts") or {}).items()}
    if not amounts and standing.get("amount") and standing.get("currency"):
        amounts = {standing["currency"]: Decimal(standing["amount"])}  # a webhook's
    if amounts and money:
        text += f": {format_amounts(amounts)}"
    return text + "."


def suppressed_entry(marked: Marked) -> dict:
    """A `suppressed` item of docs/history.md: the finding, its history fields, and the
    dismissal's who and why. JSON-safe (the amount as a string, never a float). Its money
    is the finding's: in its own currency, none (`null`, "mixed") when in several."""
    f = marked.finding
    # As a finding's row reads (reviews.reports.report): money without a code is in the default.
    currency = f.currency or (DEFAULT_CURRENCY if f.exposure else None)
    return {
        "category": f.category,
        "kind": f.kind,
        "severity": f.severity,
        "title": f.title,
        "detail": f.detail,
        "record_ids": f.record_ids,
        "suggested_fix": f.suggested_fix,
        "confidence": f.confidence,
        "amount_at_risk": str(f.amount_at_risk) if currency and currency != MIXED else None,
        "currency": currency,
        "source": f.source,
        "fingerprint": marked.fingerprint,
        "status": marked.status,
        "first_seen": marked.first_seen.isoformat() if marked.first_seen else None,
        "dismissed_by": marked.dismissal.by if marked.dismissal else "",
        "reason": marked.dismissal.reason if marked.dismissal else "",
        "dismissed_via": marked.dismissal.via if marked.dismissal else "",
    }
