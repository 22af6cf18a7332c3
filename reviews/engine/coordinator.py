"""The coordinator: fuse every specialist's findings into one ordered list, apply the
verdict policy (docs/rules.md) and write a plain-language summary. Plain data in, plain data out."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from decimal import Decimal

from reviews.engine.at_risk import AtRisk, money_at_risk
from reviews.engine.findings import RawFinding, Severity
from reviews.engine.money import format_amounts, format_count
from reviews.engine.specialists import REGISTRY
from reviews.engine.vocabulary import HUBSPOT, in_words

# Among equally severe findings with equal money at risk: each specialist's report_rank.
CATEGORY_ORDER = tuple(sorted(REGISTRY, key=lambda name: REGISTRY[name].report_rank))
# Plain look-ups for the sort keys of 180k findings (an enum call per key was a tenth
# of the coordinator's time).
_SEVERITY_RANK = {severity.value: severity.rank for severity in Severity}
_CATEGORY_RANK = {category: rank for rank, category in enumerate(CATEGORY_ORDER)}


@dataclass(slots=True)
class Review:
    findings: list[RawFinding]
    decision: str
    summary: str
    pipeline_at_risk: Decimal  # the total when one currency is at risk, else 0
    severity_counts: dict[str, int] = field(default_factory=dict)
    pipeline_by_currency: dict[str, Decimal] = field(default_factory=dict)


def decide(findings: list[RawFinding]) -> str:
    """Approval-biased verdict policy (docs/rules.md)."""
    severities = {f.severity for f in findings}
    if Severity.CRITICAL in severities:
        return "request_changes"
    if severities:
        return "approve_with_comments"
    return "approve"


def not_clean_when_degraded(decision: str, failed_specialists: list[str]) -> str:
    """A verdict reached without a specialist (a degraded run) is never `approve`: a
    detector that failed means unknown, not clean (docs/rules.md), so such a run is at
    best `approve_with_comments`."""
    if failed_specialists and decision == "approve":
        return "approve_with_comments"
    return decision


_LENIENCY = {"request_changes": 0, "approve_with_comments": 1, "approve": 2}


def not_greener_when_partial(decision: str, unknown: Iterable[str]) -> str:
    """A partial export's verdict (docs/output.md#partial-runs). `unknown`: the
    severities the kinds its missing columns switched off could report. What they would
    have found is unknown, not passed, so each counts as found: the verdict is at most
    what one finding of each would make it (`request_changes` if one could be critical,
    else `approve_with_comments`). The same export with the columns has the same other
    findings (a kind reading a missing column is switched off, `Kind.reads`) plus
    findings of at most those severities, so its verdict is never stricter than this."""
    severities = set(unknown)
    if not severities:
        return decision
    floor = "request_changes" if Severity.CRITICAL in severities else "approve_with_comments"
    return decision if _LENIENCY[decision] <= _LENIENCY[floor] else floor


def no_more_lenient(decision: str, rules_findings: list[RawFinding]) -> str:
    """`decision` (reached on a model's findings), or the rules' own verdict with every
    one of their findings demoted to a suggestion, whichever is stricter: a model can
    make the review stricter or quieter, never more lenient than the rules."""
    floor = decide([replace(f, severity=Severity.SUGGESTION.value) for f in rules_findings])
    return decision if _LENIENCY[decision] <= _LENIENCY[floor] else floor


def merge_overlapping(findings: list[RawFinding]) -> list[RawFinding]:
    """Findings of the same kind that share a record describe one problem (a cluster of
    three duplicate companies reported pairwise is one finding): union them."""
    by_kind: dict[tuple[str, str], list[RawFinding]] = defaultdict(list)
    for finding in findings:
        by_kind[(finding.category, finding.kind)].append(finding)

    merged: list[RawFinding] = []
    for group in by_kind.values():
        merged.extend(_merge_group(group))
    return merged


def _merge_group(group: list[RawFinding]) -> list[RawFinding]:
    owner: dict[str, int] = {}  # record id -> index of the cluster that holds it
    clusters: list[list[RawFinding] | None] = []
    for finding in group:
        ids = finding.record_ids
        if len(ids) == 1:  # most findings name one record: skip the set and the sort
            hits = [owner[ids[0]]] if ids[0] in owner else []
        else:
            hits = sorted({owner[r] for r in ids if r in owner})
        if not hits:
            target = len(clusters)
            clusters.append([finding])
        else:
            target = hits[0]
            for other in hits[1:]:  # this finding bridges clusters: fold them into one
                clusters[target].extend(clusters[other])  # type: ignore[union-attr]
                for moved in clusters[other]:  # type: ignore[union-attr]
                    for record_id in moved.record_ids:
                        owner[record_id] = target
                clusters[other] = None
            clusters[target].append(finding)  # type: ignore[union-attr]
        for record_id in finding.record_ids:
            owner[record_id] = target
    return [_combine(cluster) for cluster in clusters if cluster]


def _combine(cluster: list[RawFinding]) -> RawFinding:
    if len(cluster) == 1:
        return cluster[0]
    lead = min(cluster, key=lambda f: _SEVERITY_RANK[f.severity])
    record_ids = sorted({r for f in cluster for r in f.record_ids})
    exposure: dict[str, Decimal] = {}
    currencies: dict[str, str] = {}
    for finding in cluster:
        exposure.update(finding.exposure)
        currencies.update(finding.deal_currencies)
    details = list(dict.fromkeys(f.detail for f in cluster))
    return RawFinding(
        category=lead.category,
        kind=lead.kind,
        severity=lead.severity,
        title=lead.title if len(details) == 1 else f"{lead.title} (and {len(cluster) - 1} related)",
        detail=" ".join(details),
        record_ids=record_ids,
        suggested_fix=lead.suggested_fix,
        confidence=min(f.confidence for f in cluster),
        exposure=exposure,
        source="model" if all(f.source == "model" for f in cluster) else "rule",
        deal_currencies=currencies,
        owners=list(dict.fromkeys(o for f in cluster for o in f.owners)),
        record_sources=list(dict.fromkeys(s for f in cluster for s in f.record_sources)),
    )


def order(findings: list[RawFinding]) -> list[RawFinding]:
    """Most severe first, then the most money at risk, then a stable tie-break."""
    return sorted(
        findings,
        key=lambda f: (
            _SEVERITY_RANK[f.severity],
            -f.amount_at_risk,
            _CATEGORY_RANK.get(f.category, 99),
            f.kind,
            f.record_ids,
        ),
    )


def fuse(
    findings: list[RawFinding],
    counts: dict[str, int],
    failed_specialists: list[str],
    crm: str = HUBSPOT,
) -> Review:
    """The run's review; its summary in the words of the batch's CRM (vocabulary)."""
    fused = order(merge_overlapping(findings))
    at_risk = money_at_risk(fused)
    severity_counts = {s.value: 0 for s in Severity}
    for finding in fused:
        severity_counts[finding.severity] += 1
    return Review(
        findings=fused,
        decision=not_clean_when_degraded(decide(fused), failed_specialists),
        summary=in_words(
            summarise(fused, counts, severity_counts, at_risk, failed_specialists), crm
        ),
        pipeline_at_risk=at_risk.single,
        severity_counts=severity_counts,
        pipeline_by_currency=at_risk.by_currency,
    )


def summarise(
    findings: list[RawFinding],
    counts: dict[str, int],
    severity_counts: dict[str, int],
    at_risk: AtRisk,
    failed_specialists: list[str],
) -> str:
    """`at_risk`: the review's money at risk (reviews.engine.at_risk)."""
    lists = [
        _plural(counts["companies"], "company", "companies"),
        _plural(counts["contacts"], "contact"),
        _plural(counts["deals"], "deal"),
    ]
    if "leads" in counts:  # a batch with leads (Salesforce's) counts them too
        lists.append(_plural(counts["leads"], "lead"))
    scope = f"Reviewed {', '.join(lists[:-1])} and {lists[-1]}"
    if not any(counts.values()):
        # Approve, as the verdict policy says of no findings, but never as if a batch
        # had been checked: an empty export is usually a broken one.
        sentences = ["The batch is empty: no companies, contacts or deals to review."]
    elif not findings:
        sentences = [f"{scope}: no problems found."]
    else:
        # "2 critical, 3 warnings, 1 suggestion"
        tally = ", ".join(
            _plural(n, severity, "critical" if severity == "critical" else None)
            for severity, n in severity_counts.items()
            if n
        )
        sentences = [f"{scope}: {tally}."]
        if at_risk.deals:
            sentences.append(
                f"{format_amounts(at_risk.by_currency)} at risk across "
                f"{_plural(at_risk.deals, 'deal')}."
            )
        sentences.append(f"Most urgent: {findings[0].title}.")
    if failed_specialists:
        sentences.append(
            f"Degraded: the {', '.join(failed_specialists)} review failed, so this verdict "
            "was reached without it."
        )
    return " ".join(sentences)


def _plural(n: int, singular: str, plural: str | None = None) -> str:
    return f"{format_count(n)} {singular if n == 1 else (plural or singular + 's')}"
