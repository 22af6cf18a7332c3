"""Who and what the open problems belong to: the standing problems of a sync counted by
owner, by record source and by the stage of their deals, for the dataset page's charts
(docs/history.md, Standing problems). A problem that names two owners counts once for
each; one with none counts under NONE. The largest SHOWN are kept by name, the rest
summed as "(others: N)", so a portal with thousands of owners stores a short list."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping

from reviews.engine.findings import RawFinding

SHOWN = 12
NONE = "(none)"


def tally(findings: Iterable[RawFinding], attribute: str) -> list[dict]:
    """[{"name", "critical", "warning", "total"}], the most problems first, for
    `attribute` "owners" or "record_sources"."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for finding in findings:
        for name in getattr(finding, attribute) or [NONE]:
            counts[name][finding.severity] += 1
    return _ranked(counts)


def tally_stages(findings: Iterable[RawFinding], deal_stages: Mapping[str, str]) -> list[dict]:
    """As tally, by the stage of the deals each problem names (`deal_stages`: deal id ->
    stage label): a problem on deals in two stages counts once in each; one that names
    no deal is not counted."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for finding in findings:
        stages = {deal_stages[i] for i in finding.record_ids if i in deal_stages}
        for name in stages:
            counts[name][finding.severity] += 1
    return _ranked(counts)


def _ranked(counts: dict[str, Counter]) -> list[dict]:
    ranked = sorted(counts.items(), key=lambda item: (-item[1].total(), item[0]))
    shown, rest = ranked[:SHOWN], ranked[SHOWN:]
    if rest:
        others = sum((tally for _name, tally in rest), Counter())
        shown.append((f"(others: {len(rest):,})", others))
    return [
        {
            "name": name,
            "critical": tally["critical"],
            "warning": tally["warning"],
            "total": tally.total(),
        }
        for name, tally in shown
    ]
