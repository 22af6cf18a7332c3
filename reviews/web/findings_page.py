"""The run page's findings: grouped by kind with counts, filtered by severity, category
and kind, one group's findings a page at a time.

A findings-heavy run has 180k findings (most of them one kind, stale enrichment), so the
page never lists them all: it shows one row per kind from a single grouped query, and
lists findings only for a chosen kind, or when there are few enough to read, a page at a
time in the coordinator's order (position: most severe first)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from django.conf import settings
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import QueryDict

from reviews.models import ReviewRun, Severity, findings_of

FINDINGS_PER_PAGE = 100
# Up to this many findings (after the filters) they are listed without choosing a kind.
LIST_ALL_UP_TO = 500

# What one finding of each kind is about, for a group's heading: "164,977 companies:
# enrichment older than 180 days". Kinds not listed show their name.
KIND_LABELS = {
    "company_same_domain": ("company group", "company groups", "sharing a domain"),
    "company_same_name": ("company group", "company groups", "sharing a name"),
    "contact_same_email": ("contact group", "contact groups", "sharing an email"),
    "contact_same_person": ("contact group", "contact groups", "the same person twice"),
    "deal_entered_twice": ("deal group", "deal groups", "entered twice"),
    "contact_wrong_company": ("contact", "contacts", "email domain of another company"),
    "contact_missing_company": ("contact", "contacts", "no company"),
    "dangling_reference": ("record", "records", "naming a record not in the batch"),
    "deal_contact_elsewhere": ("deal", "deals", "a contact at another company"),
    "won_without_close_date": ("deal", "deals", "won without a close date"),
    "won_without_amount": ("deal", "deals", "won without an amount"),
    "negative_amount": ("deal", "deals", "negative amount"),
    "open_past_close_date": ("deal", "deals", "open past the close date"),
    "unknown_stage": ("deal", "deals", "stage not in its pipeline"),
    "missing_stage": ("deal", "deals", "no stage"),
    "amount_looks_like_typo": ("deal", "deals", "amount looks like a typo"),
    "stale_enrichment": ("company", "companies", "enrichment older than {days} days"),
    "never_enriched": ("company", "companies", "never enriched"),
    "invalid_value": ("value", "values", "malformed"),
}


@dataclass(frozen=True, slots=True)
class KindGroup:
    category: str
    kind: str
    total: int
    severities: list[tuple[str, int]]  # most severe first
    label: str


def findings_context(run: ReviewRun, params: QueryDict) -> dict:
    """Counts, groups and (when a kind is chosen or few remain) a page of findings."""
    findings = findings_of(run)
    tally = list(
        findings.order_by().values_list("category", "kind", "severity").annotate(n=Count("id"))
    )
    categories: Counter[str] = Counter()
    severities: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    for category, kind, severity, n in tally:
        categories[category] += n
        severities[severity] += n
        kinds[kind] += n
    category = _choice(params, "category", categories)
    severity = _choice(params, "severity", severities)
    kind = _choice(params, "kind", kinds)
    chosen = [
        (c, k, s, n)
        for c, k, s, n in tally
        if (not category or c == category)
        and (not severity or s == severity)
        and (not kind or k == kind)
    ]
    shown = sum(n for *_, n in chosen)
    listed = kind or shown <= LIST_ALL_UP_TO
    page = None
    if listed:
        if category:
            findings = findings.filter(category=category)
        if severity:
            findings = findings.filter(severity=severity)
        if kind:
            findings = findings.filter(kind=kind)
        # position is the coordinator's order: most severe first, then money at risk.
        page = Paginator(findings.order_by("position"), FINDINGS_PER_PAGE).get_page(
            params.get("page")
        )
    return {
        "category": category,
        "severity": severity,
        "kind": kind,
        "categories": sorted(categories.items()),
        "severity_counts": [(s, severities[s]) for s in Severity.values if severities[s]],
        "findings_total": sum(categories.values()),
        "findings_shown": shown,
        "kind_groups": kind_groups(chosen),
        "findings_page": page,
    }


def _choice(params: QueryDict, name: str, present: Counter[str]) -> str:
    value = params.get(name, "")
    return value if value in present else ""


def kind_groups(tally: list[tuple[str, str, str, int]]) -> list[KindGroup]:
    """One group per kind, the most severe first, then the biggest."""
    by_kind: dict[tuple[str, str], Counter[str]] = {}
    for category, kind, severity, n in tally:
        by_kind.setdefault((category, kind), Counter())[severity] += n
    groups = [
        KindGroup(
            category=category,
            kind=kind,
            total=sum(counts.values()),
            severities=[(s, counts[s]) for s in Severity.values if counts[s]],
            label=kind_label(kind, sum(counts.values())),
        )
        for (category, kind), counts in by_kind.items()
    ]
    rank = {s: i for i, s in enumerate(Severity.values)}
    return sorted(groups, key=lambda g: (rank[g.severities[0][0]], -g.total, g.kind))


def kind_label(kind: str, n: int) -> str:
    """e.g. "164,977 companies: enrichment older than 180 days"."""
    if kind not in KIND_LABELS:
        return f"{n:,} × {kind.replace('_', ' ')}"
    singular, plural, what = KIND_LABELS[kind]
    days = settings.REVIEW_RULES.get("STALE_ENRICHMENT_DAYS", 180)
    return f"{n:,} {singular if n == 1 else plural}: {what.format(days=days)}"
