"""Big runs: the run page groups findings by kind and opens one kind a page at a time;
a cached run shows exactly the findings of the run it reuses, wherever it is read."""

import csv
import io
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from reviews.engine.findings import RawFinding
from reviews.models import Finding, ReviewRun, findings_of
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.findings_store import write_findings
from reviews.web.findings_page import LIST_ALL_UP_TO
from tests.uploads import upload
from tests.web.conftest import reviewed

pytestmark = pytest.mark.django_db

STALE = 1_200  # over LIST_ALL_UP_TO: the page lists no finding until a kind is opened


def stale(i: int, severity: str = "suggestion") -> RawFinding:
    return RawFinding(
        category="freshness",
        kind="stale_enrichment",
        severity=severity,
        title=f"Company {i} enrichment is 400 days old",
        detail="enrichedAt 2025-06-27",
        record_ids=[f"co_{i}"],
    )


def big_run() -> ReviewRun:
    """A finished run whose findings are mostly one kind, as on a stale CRM."""
    run = reviewed()
    own = [f for f in findings_of(run).order_by("position")]
    findings_of(run).delete()
    extra = [stale(i, "warning" if i % 4 == 0 else "suggestion") for i in range(STALE)]
    kept = [
        RawFinding(f.category, f.kind, f.severity, f.title, f.detail, f.record_ids) for f in own
    ]
    write_findings(run.pk, kept + extra)
    return run


def test_run_page_groups_findings_by_kind_with_counts_and_opens_one_kind(member_client):
    run = big_run()
    url = reverse("reviews:run", args=[run.pk])
    page = member_client.get(url)
    groups = {g.kind: g for g in page.context["kind_groups"]}
    assert groups["stale_enrichment"].total == STALE
    assert groups["stale_enrichment"].severities == [("warning", 300), ("suggestion", 900)]
    assert groups["stale_enrichment"].label == "1,200 companies: enrichment older than 180 days"
    assert page.context["findings_page"] is None  # too many to list: open a kind
    html = page.content.decode()
    assert "1,200 companies: enrichment older than 180 days" in html
    assert 'href="?kind=stale_enrichment"' in html

    opened = member_client.get(url, {"kind": "stale_enrichment"})
    listed = opened.context["findings_page"]
    assert listed.paginator.count == STALE and len(listed.object_list) == 100
    assert {f.kind for f in listed.object_list} == {"stale_enrichment"}
    positions = [f.position for f in listed.object_list]
    assert positions == sorted(positions)
    assert [f.severity for f in listed.object_list][:1] == ["warning"]  # most severe first
    last = member_client.get(url, {"kind": "stale_enrichment", "page": 12})
    assert last.context["findings_page"].number == 12
    assert len(last.context["findings_page"].object_list) == 100


def test_run_page_filters_by_severity_category_and_kind_together(member_client):
    run = big_run()
    url = reverse("reviews:run", args=[run.pk])
    page = member_client.get(
        url, {"severity": "warning", "category": "freshness", "kind": "stale_enrichment"}
    )
    listed = page.context["findings_page"]
    assert listed.paginator.count == 300
    assert {(f.severity, f.category, f.kind) for f in listed.object_list} == {
        ("warning", "freshness", "stale_enrichment")
    }
    # Few enough after the filter: listed without choosing a kind.
    dedup = member_client.get(url, {"category": "dedup"})
    assert dedup.context["findings_shown"] <= LIST_ALL_UP_TO
    assert {f.category for f in dedup.context["findings_page"].object_list} == {"dedup"}
    # An unknown value is no filter at all, not an error.
    assert member_client.get(url, {"severity": "bogus"}).context["severity"] == ""


def test_run_page_of_a_big_run_takes_a_fixed_number_of_queries(
    member_client, django_assert_max_num_queries
):
    run = big_run()
    url = reverse("reviews:run", args=[run.pk])
    with django_assert_max_num_queries(14):
        assert member_client.get(url).status_code == 200
    with django_assert_max_num_queries(16):
        assert member_client.get(url, {"kind": "stale_enrichment", "page": 3}).status_code == 200


def test_an_opened_kind_is_counted_by_the_tally_not_counted_again(member_client):
    run = big_run()
    url = reverse("reviews:run", args=[run.pk])
    with CaptureQueriesContext(connection) as queries:
        page = member_client.get(url, {"kind": "stale_enrichment", "page": 3})
    assert page.context["findings_page"].paginator.count == STALE
    counts = [q["sql"] for q in queries if "COUNT(" in q["sql"] and "reviews_finding" in q["sql"]]
    assert len(counts) == 1, counts  # the tally by category, severity, kind and status
    assert "GROUP BY" in counts[0]


def test_cached_run_shows_exactly_the_findings_of_the_run_it_reuses(member_client, admin_client):
    first = big_run()
    cached = submit([upload("seed-example.json")]).run
    assert (cached.mode, cached.reused_run_id) == ("cached", first.pk)
    assert not Finding.objects.filter(run=cached).exists()  # referenced, not copied
    expected = list(
        Finding.objects.filter(run=first).order_by("position").values_list("kind", "title")
    )

    def page_of(run: ReviewRun, **params) -> list[tuple]:
        page = member_client.get(reverse("reviews:run", args=[run.pk]), params)
        return [(f.kind, f.title) for f in page.context["findings_page"].object_list]

    assert page_of(cached, kind="stale_enrichment") == page_of(first, kind="stale_enrichment")
    assert page_of(cached, category="dedup") == page_of(first, category="dedup") != []

    response = member_client.get(reverse("reviews:run_json", args=[cached.pk]))
    body = json.loads(b"".join(response.streaming_content))
    assert [(f["kind"], f["title"]) for f in body["findings"]] == expected
    assert body["run"]["reused_run"] == first.pk

    response = member_client.get(reverse("reviews:findings_csv", args=[cached.pk]))
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [(r["kind"], r["title"]) for r in rows] == expected

    exported = admin_client.post(
        reverse("admin:reviews_reviewrun_changelist"),
        {"action": "export_findings_csv", "_selected_action": [cached.pk]},
    )
    rows = list(csv.DictReader(io.StringIO(b"".join(exported.streaming_content).decode())))
    assert [(r["kind"], r["title"]) for r in rows] == expected
    assert {r["run"] for r in rows} == {str(cached.pk)}  # named as the run asked about

    change = admin_client.get(reverse("admin:reviews_reviewrun_change", args=[cached.pk]))
    assert f"{len(expected)} in all (those of run #{first.pk}" in change.content.decode()
    runs = member_client.get(reverse("reviews:runs")).context["page"].object_list
    totals = {run.pk: run.findings_total for run in runs}
    assert totals[cached.pk] == totals[first.pk] == len(expected)


def test_a_reused_run_cannot_be_deleted_from_under_its_cached_runs():
    from django.db.models import ProtectedError

    first = reviewed()
    submit([upload("seed-example.json")])
    with pytest.raises(ProtectedError):
        first.delete()


def test_finding_changelist_stays_under_six_queries(admin_client, django_assert_max_num_queries):
    big_run()
    url = reverse("admin:reviews_finding_changelist")
    with django_assert_max_num_queries(5):
        response = admin_client.get(url)
    assert len(response.context["cl"].result_list) == 100
    with django_assert_max_num_queries(5):
        assert admin_client.get(url, {"severity__exact": "warning", "p": 3}).status_code == 200
