"""The health score (reviews.engine.health, docs/history.md#health-score): the share of
records with no open problem, a critical weighing four times a warning, suggestions
nothing; each record once at its worst; rounded down, so 100 means nothing is open."""

from __future__ import annotations

from decimal import Decimal

from reviews.engine.findings import RawFinding
from reviews.engine.health import health_score


def problem(severity: str, *record_ids: str) -> RawFinding:
    return RawFinding("c", "k", severity, "t", "d", list(record_ids))


def test_an_empty_batch_has_no_score():
    assert health_score(0, []) is None
    assert health_score(0, [problem("critical", "a")]) is None


def test_a_batch_with_nothing_open_scores_100():
    assert health_score(10, []) == Decimal("100.0")


def test_suggestions_do_not_count():
    assert health_score(4, [problem("suggestion", "a", "b")]) == Decimal("100.0")


def test_a_critical_weighs_a_whole_record_and_a_warning_a_quarter():
    assert health_score(4, [problem("critical", "a")]) == Decimal("75.0")
    assert health_score(4, [problem("warning", "a")]) == Decimal("93.7")  # 93.75, down
    assert health_score(4, [problem("critical", "a"), problem("warning", "b")]) == Decimal("68.7")


def test_a_record_counts_once_at_its_worst():
    once = health_score(4, [problem("critical", "a")])
    assert (
        health_score(
            4,
            [problem("warning", "a"), problem("critical", "a"), problem("warning", "a")],
        )
        == once
    )
    assert health_score(4, [problem("warning", "a"), problem("warning", "a")]) == Decimal("93.7")


def test_a_pair_counts_both_records():
    assert health_score(4, [problem("critical", "a", "b")]) == Decimal("50.0")


def test_all_broken_scores_zero_and_never_below():
    assert health_score(2, [problem("critical", "a", "b")]) == Decimal("0.0")
    # Findings naming more ids than the batch counts (associated records) stay at 0.
    assert health_score(2, [problem("critical", "a", "b", "c")]) == Decimal("0.0")


def test_one_critical_among_many_is_never_rounded_to_100():
    assert health_score(100_000, [problem("critical", "a")]) == Decimal("99.9")


def test_a_stored_row_reads_like_a_raw_finding():
    class Row:  # a Finding row: severity and record_ids, nothing else needed
        severity = "warning"
        record_ids = ["x"]

    assert health_score(1, [Row()]) == Decimal("75.0")
