"""Standing problems by owner and record source (reviews.engine.history.breakdown)."""

from __future__ import annotations

from reviews.engine.findings import RawFinding
from reviews.engine.history import breakdown


def finding(severity: str, owners: list[str], sources: list[str] | None = None) -> RawFinding:
    return RawFinding(
        "pipeline", "won_without_amount", severity, "t", "", ["dl_1"],
        owners=owners, record_sources=sources or [],
    )  # fmt: skip


def test_each_owner_counts_each_problem_once_the_most_first_and_none_named():
    found = [
        finding("critical", ["maya"]),
        finding("warning", ["maya", "owen"]),
        finding("warning", []),
        finding("warning", ["owen"]),
        finding("warning", ["owen"]),
    ]
    assert breakdown.tally(found, "owners") == [
        {"name": "owen", "critical": 0, "warning": 3, "total": 3},
        {"name": "maya", "critical": 1, "warning": 1, "total": 2},
        {"name": "(none)", "critical": 0, "warning": 1, "total": 1},
    ]


def test_past_the_shown_the_rest_are_summed_and_say_how_many():
    found = [finding("warning", [f"owner {n:02}"]) for n in range(breakdown.SHOWN + 3)]
    rows = breakdown.tally(found, "owners")
    assert len(rows) == breakdown.SHOWN + 1
    assert rows[-1] == {"name": "(others: 3)", "critical": 0, "warning": 3, "total": 3}
    assert sum(row["total"] for row in rows) == len(found)
