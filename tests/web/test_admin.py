"""The admin: fast lists with many findings, the capped inline, search and actions."""

import csv
import io
import re

import pytest
from django.urls import reverse

from reviews.admin.runs import FINDINGS_INLINE_LIMIT
from reviews.models import Dataset, Finding, ReviewRun
from tests.web.conftest import reviewed

pytestmark = pytest.mark.django_db


def add_findings(run: ReviewRun, count: int) -> None:
    start = run.findings.count()
    Finding.objects.bulk_create(
        (
            Finding(
                run=run,
                position=start + i,
                category="dedup",
                kind="company_same_domain",
                severity="warning",
                title=f"Duplicate {i}",
                detail="two companies share a domain",
                record_ids=[f"co_{i}", f"co_{i + 1}"],
            )
            for i in range(count)
        ),
        batch_size=5000,
    )


def test_finding_changelist_has_no_per_row_queries(admin_client, django_assert_max_num_queries):
    for _ in range(3):
        add_findings(reviewed(), 400)  # a full page of 100, and a page 3
    url = reverse("admin:reviews_finding_changelist")
    with django_assert_max_num_queries(10):
        response = admin_client.get(url)
    assert response.status_code == 200
    assert len(response.context["cl"].result_list) == 100
    with django_assert_max_num_queries(10):
        assert admin_client.get(url, {"severity__exact": "warning", "p": 3}).status_code == 200


def test_run_changelist_has_no_per_row_queries(admin_client, django_assert_max_num_queries):
    for _ in range(5):
        add_findings(reviewed(), 100)
    with django_assert_max_num_queries(10):
        response = admin_client.get(reverse("admin:reviews_reviewrun_changelist"))
    assert len(response.context["cl"].result_list) == 5
    assert "approve_with_comments" in response.content.decode()


def test_batch_changelist_has_no_per_row_queries(admin_client, django_assert_max_num_queries):
    for _ in range(5):
        reviewed()
    with django_assert_max_num_queries(10):
        response = admin_client.get(reverse("admin:reviews_batch_changelist"))
    assert len(response.context["cl"].result_list) == 5


def test_run_page_shows_the_first_findings_and_links_to_the_rest(
    admin_client, django_assert_max_num_queries
):
    run = reviewed()
    add_findings(run, 500)
    total = run.findings.count()
    with django_assert_max_num_queries(30):
        response = admin_client.get(reverse("admin:reviews_reviewrun_change", args=[run.pk]))
    assert response.status_code == 200
    page = response.content.decode()
    finding_formset = next(
        f for f in response.context["inline_admin_formsets"] if f.opts.model is Finding
    )
    assert len(list(finding_formset)) == FINDINGS_INLINE_LIMIT
    assert f"{total} in all; {FINDINGS_INLINE_LIMIT} shown below" in page
    assert f"/admin/reviews/finding/?run__id__exact={run.pk}" in page

    listed = admin_client.get(
        reverse("admin:reviews_finding_changelist"), {"run__id__exact": run.pk}
    )
    assert listed.context["cl"].result_count == total


@pytest.mark.parametrize("field", ["batch_id", "file_name", "sha256_prefix"])
def test_runs_and_findings_are_searchable_by_batch_id_file_name_and_sha256(admin_client, field):
    run = reviewed()
    other = reviewed()
    term = {
        "batch_id": str(run.batch_id),
        "file_name": "seed-example",
        "sha256_prefix": run.batch.sha256[:12],
    }[field]
    runs = admin_client.get(reverse("admin:reviews_reviewrun_changelist"), {"q": term})
    found = {r.pk for r in runs.context["cl"].result_list}
    assert run.pk in found
    if field == "batch_id":
        assert other.pk not in found
    findings = admin_client.get(reverse("admin:reviews_finding_changelist"), {"q": term})
    assert {f.run_id for f in findings.context["cl"].result_list} >= {run.pk}
    batches = admin_client.get(reverse("admin:reviews_batch_changelist"), {"q": term})
    assert run.batch_id in {b.pk for b in batches.context["cl"].result_list}


def test_rerun_action_starts_a_fresh_run_per_selected_run(
    admin_client, django_capture_on_commit_callbacks
):
    first, second = reviewed(), reviewed()
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            reverse("admin:reviews_reviewrun_changelist"),
            {"action": "rerun_selected", "_selected_action": [first.pk, second.pk]},
            follow=True,
        )
    assert response.status_code == 200
    new_runs = ReviewRun.objects.exclude(pk__in=[first.pk, second.pk])
    assert sorted(r.batch_id for r in new_runs) == sorted([first.batch_id, second.batch_id])
    assert {r.status for r in new_runs} == {"done"}
    assert "Started 2 runs: " in response.content.decode()


def test_rerun_action_counts_against_the_rate_limit(admin_client, settings, redis_url):
    runs = [reviewed() for _ in range(3)]
    settings.RATE_LIMIT_PER_HOUR = 1
    response = admin_client.post(
        reverse("admin:reviews_reviewrun_changelist"),
        {"action": "rerun_selected", "_selected_action": [r.pk for r in runs]},
        follow=True,
    )
    page = response.content.decode()
    new_runs = ReviewRun.objects.exclude(pk__in=[r.pk for r in runs]).order_by("pk")
    # One within the limit, one just over it (failback), then refused.
    assert [r.mode for r in new_runs] == ["fresh", "failback"]
    assert "not re-run: " in page and "rate limit" in page


def test_export_action_writes_the_findings_of_selected_runs(admin_client):
    run, other = reviewed(), reviewed()
    response = admin_client.post(
        reverse("admin:reviews_reviewrun_changelist"),
        {"action": "export_findings_csv", "_selected_action": [run.pk]},
    )
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0][:3] == ["run", "position", "severity"]
    assert {row[0] for row in rows[1:]} == {str(run.pk)}
    assert len(rows) - 1 == run.findings.count()
    assert other.findings.exists()


def test_runs_are_read_only_in_the_admin(admin_client):
    run = reviewed()
    response = admin_client.get(reverse("admin:reviews_reviewrun_change", args=[run.pk]))
    assert response.context["has_change_permission"] is False
    assert admin_client.get(reverse("admin:reviews_batch_add")).status_code == 403


def test_datasets_are_edited_in_the_admin_and_list_their_batches(admin_client):
    run = reviewed()
    response = admin_client.post(
        reverse("admin:reviews_dataset_add"), {"name": "acme-hubspot", "verdict_scope": "all"}
    )
    assert response.status_code == 302
    dataset = Dataset.objects.get(name="acme-hubspot")
    assert dataset.verdict_scope == Dataset.VerdictScope.ALL
    run.batch.dataset = dataset
    run.batch.save(update_fields=["dataset"])
    page = admin_client.get(reverse("admin:reviews_dataset_changelist")).content.decode()
    assert f"/admin/reviews/batch/?dataset__id__exact={dataset.pk}" in page
    assert Dataset(name="x").verdict_scope == "new"


def test_the_run_list_marks_only_degraded_runs(admin_client):
    healthy = reviewed()
    degraded = reviewed()
    ReviewRun.objects.filter(pk=degraded.pk).update(degraded=True)
    page = admin_client.get(reverse("admin:reviews_reviewrun_changelist")).content.decode()
    rows = {
        int(match[1]): match[0]
        for match in re.findall(r'(<tr>.*?change/">(\d+)</a>.*?</tr>)', page, re.DOTALL)
    }
    # Django's boolean column drew a red cross on every healthy run.
    assert "icon-no" not in rows[healthy.pk] and "icon-yes" not in rows[degraded.pk]
    assert 'class="field-degraded_mark">-</td>' in rows[healthy.pk]  # the admin's blank
    assert '<span class="run-degraded">degraded</span>' in rows[degraded.pk]
    assert "DEGRADED" in page.upper()  # the column keeps its heading (and its sorting)
    ordered = admin_client.get(reverse("admin:reviews_reviewrun_changelist"), {"o": "7"})
    assert ordered.status_code == 200
