"""The run page's findings: grouped by kind with counts, filtered by severity, category,
kind and (a dataset's sync) status, one group's findings a page at a time. The findings
CSV exports what the page shows (shown_findings).

A findings-heavy run has 180k findings (most of them one kind, stale enrichment), so the
page never lists them all: it shows one row per kind from a single grouped query, and
lists findings only for a chosen kind, or when there are few enough to read, a page at a
time in the coordinator's order (position: most severe first)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from django.conf import settings
from django.core.paginator import Paginator
from django.db.models import Count, QuerySet
from django.http import QueryDict

from reviews.engine.specialists.spec import Kind
from reviews.engine.vocabulary import HUBSPOT, crm_of, in_words
from reviews.models import Finding, ReviewRun, Severity, findings_of
from reviews.orchestration.dataset.policies import kinds_of_run
from reviews.web.forms import DismissForm
from reviews.web.history_views import mark_dismissed

FINDINGS_PER_PAGE = 100
# Up to this many findings (after the filters) they are listed without choosing a kind.
LIST_ALL_UP_TO = 500


@dataclass(frozen=True, slots=True)
class KindGroup:
    category: str
    kind: str
    total: int
    severities: list[tuple[str, int]]  # most severe first
    label: str


FILTERS = ("category", "severity", "kind", "status")


def findings_context(run: ReviewRun, params: QueryDict) -> dict:
    """Counts, groups and (when a kind is chosen or few remain) a page of findings."""
    in_dataset = run.batch.dataset_id is not None
    tally = _tally(run)
    chosen_filters = _filters(params, tally, in_dataset)
    chosen = [row for row in tally if _matches(row, chosen_filters)]
    shown = sum(row[-1] for row in chosen)
    page = None
    if chosen_filters["kind"] or shown <= LIST_ALL_UP_TO:
        paginator = Paginator(_filtered(run, chosen_filters), FINDINGS_PER_PAGE)
        # The tally has counted them: no COUNT(*) over 150k rows of one kind per page.
        paginator.count = shown
        page = paginator.get_page(params.get("page"))
        page.object_list = mark_dismissed(list(page.object_list), run)
    totals = {name: Counter() for name in FILTERS}
    crm = crm_of(run.batch.source)  # kinds headed in its words (reviews.engine.vocabulary)
    for row in tally:
        for name, value in zip(FILTERS, row, strict=False):
            totals[name][value] += row[-1]
    return {
        **chosen_filters,
        "in_dataset": in_dataset,
        "dismiss_form": DismissForm(),
        "categories": sorted(totals["category"].items()),
        "severity_counts": [
            (s, totals["severity"][s]) for s in Severity.values if totals["severity"][s]
        ],
        "status_counts": (
            [(s, totals["status"][s]) for s in Finding.Status.values] if in_dataset else []
        ),
        "findings_total": sum(totals["category"].values()),
        "findings_shown": shown,
        "kind_groups": kind_groups(
            [(c, k, s, n) for c, s, k, _status, n in chosen], kinds_of_run(run), crm
        ),
        "crm": crm,
        "findings_page": page,
    }


def shown_findings(run: ReviewRun, params: QueryDict) -> tuple[QuerySet[Finding], str]:
    """The findings the page shows under these filters (all of them, not one page), for
    the CSV download, and a name for the file saying which filters were on."""
    chosen = _filters(params, _tally(run), run.batch.dataset_id is not None)
    name = "-".join(value for value in chosen.values() if value)
    return _filtered(run, chosen), name


def _tally(run: ReviewRun) -> list[tuple[str, str, str, str, int]]:
    """(category, severity, kind, status, count) of the findings the run shows."""
    return list(findings_of(run).order_by().values_list(*FILTERS).annotate(n=Count("id")))


def _filters(params: QueryDict, tally: list[tuple], in_dataset: bool) -> dict[str, str]:
    """Each filter's value when the run has findings of it, else "" (no filter)."""
    present = {name: {row[i] for row in tally} for i, name in enumerate(FILTERS)}
    # Both statuses are always offered in a dataset's sync (a filter may show none);
    # outside a dataset they mean nothing.
    present["status"] = set(Finding.Status.values) if in_dataset else set()
    return {name: _choice(params, name, present[name]) for name in FILTERS}


def _matches(row: tuple, chosen: dict[str, str]) -> bool:
    return all(not chosen[name] or row[i] == chosen[name] for i, name in enumerate(FILTERS))


def _filtered(run: ReviewRun, chosen: dict[str, str]) -> QuerySet[Finding]:
    # position is the coordinator's order: most severe first, then money at risk.
    return findings_of(run).filter(**{k: v for k, v in chosen.items() if v}).order_by("position")


def _choice(params: QueryDict, name: str, present: set[str]) -> str:
    value = params.get(name, "")
    return value if value in present else ""


def kind_groups(
    tally: list[tuple[str, str, str, int]], kinds: Mapping[str, Kind], crm: str = HUBSPOT
) -> list[KindGroup]:
    """One group per kind, the most severe first, then the biggest; headed in the words
    of the run's CRM (reviews.engine.vocabulary)."""
    by_kind: dict[tuple[str, str], Counter[str]] = {}
    for category, kind, severity, n in tally:
        by_kind.setdefault((category, kind), Counter())[severity] += n
    groups = [
        KindGroup(
            category=category,
            kind=kind,
            total=sum(counts.values()),
            severities=[(s, counts[s]) for s in Severity.values if counts[s]],
            label=in_words(kind_label(kind, sum(counts.values()), kinds), crm),
        )
        for (category, kind), counts in by_kind.items()
    ]
    rank = {s: i for i, s in enumerate(Severity.values)}
    return sorted(groups, key=lambda g: (rank[g.severities[0][0]], -g.total, g.kind))


def kind_label(kind: str, n: int, kinds: Mapping[str, Kind]) -> str:
    """e.g. "164,977 companies: enrichment older than 180 days" (the kind's label in
    its specialist's declaration, reviews.engine.specialists)."""
    declared = kinds.get(kind)  # a kind only a model made has no declaration
    if declared is None:
        return f"{n:,} × {kind.replace('_', ' ')}"
    return declared.heading(n, settings.REVIEW_RULES)
