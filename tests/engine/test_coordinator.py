from decimal import Decimal

from reviews.engine.coordinator import decide, fuse, merge_overlapping, order
from reviews.engine.findings import RawFinding

COUNTS = {"companies": 2, "contacts": 2, "deals": 1}


def finding(kind="company_same_domain", severity="warning", ids=("co_1", "co_2"), **extra):
    return RawFinding(
        category=extra.pop("category", "dedup"),
        kind=kind,
        severity=severity,
        title=extra.pop("title", f"{kind} on {', '.join(ids)}"),
        detail=extra.pop("detail", f"detail of {kind} {ids}"),
        record_ids=list(ids),
        **extra,
    )


def test_decide_follows_the_verdict_policy():
    assert decide([]) == "approve"
    assert decide([finding(severity="suggestion")]) == "approve_with_comments"
    assert decide([finding(severity="warning"), finding(severity="suggestion")]) == (
        "approve_with_comments"
    )
    assert decide([finding(severity="warning"), finding(severity="critical")]) == (
        "request_changes"
    )


def test_merge_overlapping_joins_pairwise_findings_of_one_cluster():
    pairs = [finding(ids=("co_1", "co_2")), finding(ids=("co_2", "co_3"))]
    merged = merge_overlapping(pairs)
    assert len(merged) == 1
    assert merged[0].record_ids == ["co_1", "co_2", "co_3"]


def test_merge_overlapping_folds_two_clusters_bridged_by_a_third_finding():
    findings = [finding(ids=("a", "b")), finding(ids=("c", "d")), finding(ids=("b", "c"))]
    merged = merge_overlapping(findings)
    assert [f.record_ids for f in merged] == [["a", "b", "c", "d"]]


def test_merge_overlapping_keeps_different_kinds_and_disjoint_records_apart():
    findings = [
        finding(ids=("co_1", "co_2")),
        finding(ids=("co_3", "co_4")),
        finding(kind="contact_same_email", ids=("co_1", "co_9")),
    ]
    assert len(merge_overlapping(findings)) == 3


def test_merged_finding_takes_the_worst_severity_and_unions_exposure():
    findings = [
        finding(severity="warning", ids=("a", "b"), exposure={"dl_1": Decimal(100)}),
        finding(
            severity="critical",
            ids=("b", "c"),
            exposure={"dl_1": Decimal(100), "dl_2": Decimal(50)},
        ),
    ]
    [merged] = merge_overlapping(findings)
    assert merged.severity == "critical"
    assert merged.amount_at_risk == Decimal(150)


def test_order_puts_severity_first_then_money():
    small_critical = finding(severity="critical", ids=("x",), exposure={"d1": Decimal(1)})
    big_warning = finding(severity="warning", ids=("y",), exposure={"d2": Decimal(10**6)})
    small_warning = finding(severity="warning", ids=("z",), exposure={"d3": Decimal(5)})
    assert order([small_warning, big_warning, small_critical]) == [
        small_critical,
        big_warning,
        small_warning,
    ]


def test_fuse_summary_quotes_pipeline_dollars_without_double_counting():
    findings = [
        finding(
            kind="deal_entered_twice",
            severity="critical",
            ids=("dl_1", "dl_2"),
            exposure={"dl_2": Decimal(410000)},
            title="Deal entered twice",
        ),
        finding(
            kind="won_without_close_date",
            category="pipeline",
            severity="critical",
            ids=("dl_2",),
            exposure={"dl_2": Decimal(410000)},
        ),
    ]
    review = fuse(findings, COUNTS, failed_specialists=[])
    assert review.decision == "request_changes"
    assert review.pipeline_at_risk == Decimal(410000)
    assert "$410,000 at risk across 1 deal." in review.summary
    assert review.summary.startswith("Reviewed 2 companies, 2 contacts and 1 deal: 2 critical.")


def test_fuse_with_no_findings_approves_and_says_so():
    review = fuse([], COUNTS, failed_specialists=[])
    assert review.decision == "approve"
    assert review.summary == "Reviewed 2 companies, 2 contacts and 1 deal: no problems found."


def test_fuse_names_a_failed_specialist_in_the_summary():
    review = fuse([], COUNTS, failed_specialists=["attribution"])
    assert "Degraded: the attribution review failed" in review.summary


def test_fuse_says_an_empty_batch_was_empty():
    review = fuse([], {"companies": 0, "contacts": 0, "deals": 0}, [])
    assert review.decision == "approve"
    assert review.summary == "The batch is empty: no companies, contacts or deals to review."
    one = fuse([], {"companies": 1, "contacts": 0, "deals": 0}, [])
    assert one.summary == "Reviewed 1 company, 0 contacts and 0 deals: no problems found."
