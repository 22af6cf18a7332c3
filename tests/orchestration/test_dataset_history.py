"""Dataset history through the real review path on Postgres (docs/history.md): two
consecutive syncs generated with their truth, a dismissal between them."""

from __future__ import annotations

import copy

import pytest

from reviews.engine.history.compare import fingerprint
from reviews.models import Dataset, Dismissal, ReviewRun
from reviews.orchestration.dataset.dismissals import DismissalError, dismiss, undo_dismissal
from reviews.orchestration.intake.serve import rerun, reuse_run
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from reviews.orchestration.serving import decide as serving
from reviews.reports.report import run_report
from reviews.samplegen.sync import generate_syncs
from tests.uploads import json_upload

pytestmark = pytest.mark.django_db


def reviewed(batch: dict, **options) -> ReviewRun:
    submission = submit([json_upload(batch)], dispatch=False, no_cache=True, **options)
    assert submission.accepted, submission.errors
    start_review.apply(kwargs={"run_id": submission.run.pk})
    submission.run.refresh_from_db()
    return submission.run


def matching(items: list[dict], planted: dict) -> list[dict]:
    """Findings of the planted item's kind naming all of its records."""
    return [
        f
        for f in items
        if f["kind"] == planted["kind"] and set(planted["record_ids"]) <= set(f["record_ids"])
    ]


@pytest.fixture(scope="module")
def syncs() -> list[tuple[dict, dict]]:
    return list(generate_syncs(2_000, seed=3, syncs=2))


def test_two_syncs_give_every_finding_its_status_and_list_exactly_the_fixed_ones(
    postgres, syncs, django_user_model
):
    (first, _), (second, truth) = syncs
    run1 = reviewed(first)
    dataset = Dataset.objects.get(name=first["dataset"])
    assert run1.batch.dataset == dataset and run1.baseline_run is None
    report1 = run_report(run1)
    assert {f["status"] for f in report1["findings"]} == {"new"}
    assert report1["run"]["resolved"] == [] and report1["suppressed"] == []

    # The team dismisses a problem that the next sync still has.
    target = next(
        p for p in truth["planted"] if p["status"] == "open" and p["kind"] == "company_same_name"
    )
    [finding1] = matching(report1["findings"], target)
    user = django_user_model.objects.create_user("dana")
    dismiss(dataset, finding1["fingerprint"], reason="two subsidiaries", user=user)

    run2 = reviewed(second)
    assert run2.baseline_run_id == run1.pk
    report2 = run_report(run2)
    findings = report2["findings"]
    for planted in truth["planted"]:
        if planted is target:
            continue
        found = matching(findings, planted)
        assert found, planted
        assert {f["status"] for f in found} == {planted["status"]}, planted
    assert any(p["status"] == "open" for p in truth["planted"])
    assert any(p["status"] == "new" for p in truth["planted"])
    for f in findings:
        assert f["fingerprint"] == fingerprint(f["category"], f["kind"], f["record_ids"])
        expected = first["exportedAt"] if f["status"] == "open" else second["exportedAt"]
        assert f["first_seen"] == expected

    # Exactly the fixed problems are resolved: each fixed item by one entry, nothing else.
    resolved = report2["run"]["resolved"]
    assert truth["resolved"]
    for fixed in truth["resolved"]:
        assert len(matching(resolved, fixed)) == 1, fixed
    assert len(resolved) == len(truth["resolved"])

    # The dismissed problem is detected, suppressed with who and why, and out of the list.
    [suppressed] = report2["suppressed"]
    assert suppressed["fingerprint"] == finding1["fingerprint"]
    assert (suppressed["dismissed_by"], suppressed["reason"]) == ("dana", "two subsidiaries")
    assert not matching(findings, target)
    summary = report2["summary"]
    new = sum(f["status"] == "new" for f in findings)
    still_open = sum(f["status"] == "open" for f in findings)
    assert f"{new:,} new problems; {still_open:,} still open; {len(resolved)} resolved" in summary
    assert "1 dismissed problem is suppressed." in summary


def small_sync(as_of: str, amount: int, *, dataset: str | None = "acme-hubspot") -> dict:
    """One won deal without a close date (critical) and a duplicate domain (warning)."""
    batch = {
        "exportedAt": as_of,
        "companies": [
            {"id": "co_1", "name": "Acme", "domain": "acme.example"},
            {"id": "co_2", "name": "Acme Europe", "domain": "www.acme.example"},
        ],
        "contacts": [],
        "deals": [
            {"id": "dl_1", "name": "Acme renewal", "amount": amount, "stage": "closedwon",
             "companyId": "co_1"},
        ],
    }  # fmt: skip
    if dataset:
        batch["dataset"] = dataset
    return batch


@pytest.mark.parametrize(
    ("scope", "verdict"), [("new", "approve"), ("all", "approve_with_comments")]
)
def test_a_dismissed_critical_never_decides_the_verdict(postgres, scope, verdict):
    run1 = reviewed(small_sync("2026-08-01T09:00:00Z", 1000))
    assert run1.verdict.decision == "request_changes"  # the first sync: everything is new
    dataset = run1.batch.dataset
    dataset.verdict_scope = scope
    dataset.save()
    critical = run1.findings.get(severity="critical")
    dismiss(dataset, critical.fingerprint, reason="closed in the old CRM", user=None)

    second = small_sync("2026-08-02T09:00:00Z", 1300)
    second["companies"].reverse()
    run2 = reviewed(second)
    assert run2.verdict.decision == verdict
    assert [s["kind"] for s in run2.suppressed] == ["won_without_close_date"]
    assert list(run2.findings.values_list("kind", "status")) == [("company_same_domain", "open")]
    assert "0 new problems; 1 still open; 0 resolved since the last sync." in run2.verdict.summary


def test_undoing_a_dismissal_brings_the_problem_back_as_open(postgres):
    run1 = reviewed(small_sync("2026-08-01T09:00:00Z", 1000))
    dataset = run1.batch.dataset
    critical = run1.findings.get(severity="critical")
    dismiss(dataset, critical.fingerprint, reason="not ours", user=None)
    assert reviewed(small_sync("2026-08-02T09:00:00Z", 1000)).suppressed
    undone = undo_dismissal(dataset, critical.fingerprint, user=None)
    assert undone.undone_at is not None
    run3 = reviewed(small_sync("2026-08-03T09:00:00Z", 1000))
    assert run3.suppressed == []
    assert run3.findings.get(severity="critical").status == "open"  # suppressed in run 2
    assert run3.verdict.decision == "approve"  # scope new: nothing new since sync 2
    with pytest.raises(DismissalError, match="not dismissed"):
        undo_dismissal(dataset, critical.fingerprint, user=None)
    assert Dismissal.objects.filter(dataset=dataset).count() == 1


def test_dismiss_needs_a_reason_and_a_known_fingerprint(postgres):
    run1 = reviewed(small_sync("2026-08-01T09:00:00Z", 1000))
    dataset, key = run1.batch.dataset, run1.findings.first().fingerprint
    with pytest.raises(DismissalError, match="reason is required"):
        dismiss(dataset, key, reason="  ", user=None)
    with pytest.raises(DismissalError, match="not a fingerprint"):
        dismiss(dataset, "'; drop table", reason="x", user=None)
    for reason in ("a\x00b", "lone \ud800 surrogate"):
        with pytest.raises(DismissalError, match="NUL byte or a lone surrogate"):
            dismiss(dataset, key, reason=reason, user=None)
    with pytest.raises(DismissalError, match="no finding"):
        dismiss(dataset, "0" * 16, reason="x", user=None)
    first = dismiss(dataset, key, reason="once", user=None)
    assert dismiss(dataset, key, reason="twice", user=None) == first  # the standing one


def test_a_rerun_compares_with_the_baseline_of_the_first_review(postgres):
    run1 = reviewed(small_sync("2026-08-01T09:00:00Z", 1000))
    run2 = reviewed(small_sync("2026-08-02T09:00:00Z", 1000))
    # A sync dated between them arrives later; a re-run of sync 2 keeps its baseline.
    reviewed(small_sync("2026-08-01T21:00:00Z", 1000))
    again = rerun(run2)
    start_review.apply(kwargs={"run_id": again.pk})
    again.refresh_from_db()
    assert run2.baseline_run_id == again.baseline_run_id == run1.pk
    assert set(again.findings.values_list("status", flat=True)) == {"open"}


def test_the_latest_earlier_good_run_is_the_baseline_whatever_the_upload_order(postgres):
    later = reviewed(small_sync("2026-08-03T09:00:00Z", 1000))
    earlier = reviewed(small_sync("2026-08-01T09:00:00Z", 1000))
    assert later.baseline_run is None and earlier.baseline_run is None
    middle = reviewed(small_sync("2026-08-02T09:00:00Z", 1000))
    assert middle.baseline_run_id == earlier.pk
    ReviewRun.objects.filter(pk=earlier.pk).update(degraded=True)  # not a good baseline
    assert reviewed(small_sync("2026-08-02T10:00:00Z", 1000)).baseline_run_id == middle.pk


def test_a_batch_without_a_dataset_is_reviewed_as_before(postgres):
    run = reviewed(small_sync("2026-08-01T09:00:00Z", 1000, dataset=None))
    report = run_report(run)
    assert run.batch.dataset is None and "suppressed" not in report
    assert "baseline_run" not in report["run"] and "fingerprint" not in report["findings"][0]
    assert report["verdict"] == "request_changes"
    assert "since the last sync" not in report["summary"]


def test_the_named_dataset_wins_over_the_json_key_and_bad_names_are_refused(postgres):
    run = reviewed(small_sync("2026-08-01T09:00:00Z", 1000), dataset="beta-crm")
    assert run.batch.dataset.name == "beta-crm"
    for name, problem in (("x" * 201, "at most 200"), ("bad\x00name", "control character")):
        batch = copy.deepcopy(small_sync("2026-08-01T09:00:00Z", 1000, dataset=name))
        submission = submit([json_upload(batch)], dispatch=False)
        assert not submission.accepted
        assert submission.errors[0].startswith("dataset: ") and problem in submission.errors[0]
    lone = submit([json_upload(small_sync("2026-08-01T09:00:00Z", 1))], dataset="a\ud800b")
    assert not lone.accepted and "lone surrogate" in lone.errors[0]


def test_a_served_run_carries_the_statuses_of_the_run_it_reuses(postgres):
    run1 = reviewed(small_sync("2026-08-01T09:00:00Z", 1000))
    critical = run1.findings.get(severity="critical")
    dismiss(run1.batch.dataset, critical.fingerprint, reason="old CRM", user=None)
    second = small_sync("2026-08-02T09:00:00Z", 1000)
    second["companies"].pop()  # the duplicate is merged: resolved
    run2 = reviewed(second)
    decision = serving.ServeDecision(ReviewRun.Mode.FAILBACK, "test", reuse_run_id=run2.pk)
    served = reuse_run(run2.batch, decision)
    assert (served.baseline_run_id, served.resolved, served.suppressed) == (
        run1.pk,
        run2.resolved,
        run2.suppressed,
    )
    assert [r["kind"] for r in served.resolved] == ["company_same_domain"]
    assert run_report(served)["suppressed"] == run_report(run2)["suppressed"]
    # A later sync compared with the served run finds the suppressed problem open.
    ReviewRun.objects.filter(pk=run2.pk).update(degraded=True)  # the served run is the baseline
    run3 = reviewed(small_sync("2026-08-03T09:00:00Z", 1000))
    assert run3.baseline_run_id == served.pk
    assert [s["status"] for s in run3.suppressed] == ["open"]
