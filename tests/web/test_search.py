"""Search finds what a person types: a record id, a company in a finding's title, a kind,
a batch id or file name; in the admin and in the dashboard's runs list."""

import os
import subprocess
import sys

import pytest
from django.db import connection
from django.urls import reverse

from reviews.models import Finding, ReviewRun
from reviews.search import search_findings, search_runs
from tests.services import ROOT
from tests.uploads import json_upload
from tests.web.conftest import reviewed

pytestmark = pytest.mark.django_db


def acme_batch() -> dict:
    """Two companies on one domain: a company_same_domain finding naming co_1 and co_10."""
    return {
        "id": "acme-sync-7",
        "exportedAt": "2026-08-01T09:00:00Z",
        "companies": [
            {"id": "co_1", "name": "Acme Robotics", "domain": "acme.example"},
            {"id": "co_10", "name": "Acme Robotics GmbH", "domain": "www.acme.example"},
        ],
        "contacts": [],
        "deals": [],
    }


def test_runs_are_found_by_a_record_id_in_their_findings_exactly():
    acme, seed = reviewed([json_upload(acme_batch(), "acme.json")]), reviewed()
    runs = ReviewRun.objects.all()
    assert set(search_runs(runs, "co_10")) == {acme}
    assert set(search_runs(runs, "dl_201")) == {seed}  # the seed's open_past_close_date
    # Titles name their records ("... (co_1)"), so a prefix of an id now finds the runs
    # whose titles carry it; an id in no finding finds nothing.
    assert set(search_runs(runs, "co_99")) == set()
    assert set(search_runs(runs, "acme-sync")) == {acme}  # the batch's own id
    assert set(search_runs(runs, "acme.json co_1")) == {acme}  # every word must match
    assert set(search_runs(runs, "acme.json dl_201")) == set()
    assert set(search_runs(runs, str(seed.batch_id))) == {seed}


def test_runs_are_found_by_their_dataset_name():
    acme = reviewed([json_upload({**acme_batch(), "dataset": "acme-hubspot"}, "acme.json")])
    reviewed()
    runs = ReviewRun.objects.all()
    assert set(search_runs(runs, "acme-hub")) == {acme}
    assert set(search_runs(runs, "globex-hubspot")) == set()


def test_findings_are_found_by_record_id_title_words_and_kind():
    acme = reviewed([json_upload(acme_batch(), "acme.json")])
    reviewed()
    findings = Finding.objects.all()
    by_id = search_findings(findings, "co_1")
    assert [(f.run_id, f.kind) for f in by_id] == [(acme.pk, "company_same_domain")]
    assert {f.kind for f in search_findings(findings, "acme.example")} == {"company_same_domain"}
    assert {f.kind for f in search_findings(findings, "same_email")} == {"contact_same_email"}


@pytest.mark.parametrize(
    "query",
    [
        "q=%ED%A0%80",  # a lone surrogate, as a browser would send it: not UTF-8
        "q=" + "9" * 5000,  # more digits than any id column holds
        "q=%22unclosed",
        "q=%27+OR+1%3D1+--",
    ],
)
def test_odd_search_text_finds_nothing_and_does_not_fail(admin_client, member_client, query):
    reviewed()
    runs = admin_client.get(f"{reverse('admin:reviews_reviewrun_changelist')}?{query}")
    findings = admin_client.get(f"{reverse('admin:reviews_finding_changelist')}?{query}")
    dashboard = member_client.get(f"{reverse('reviews:runs')}?{query}")
    assert (runs.status_code, findings.status_code, dashboard.status_code) == (200, 200, 200)
    assert runs.context["cl"].result_count == 0
    assert list(findings.context["cl"].result_list) == []


def test_a_nul_byte_in_a_search_is_refused_with_a_message(admin_client, member_client):
    reviewed()
    runs = admin_client.get(f"{reverse('admin:reviews_reviewrun_changelist')}?q=co_1%00")
    dashboard = member_client.get(f"{reverse('reviews:runs')}?q=co_1%00")
    for response in (runs, dashboard):
        assert response.status_code == 200
        assert "Null characters are not allowed" in response.content.decode()


def test_admin_lists_search_with_the_same_function(admin_client):
    acme = reviewed([json_upload(acme_batch(), "acme.json")])
    reviewed()
    runs = admin_client.get(reverse("admin:reviews_reviewrun_changelist"), {"q": "co_10"})
    assert [r.pk for r in runs.context["cl"].result_list] == [acme.pk]
    findings = admin_client.get(reverse("admin:reviews_finding_changelist"), {"q": "co_10"})
    assert {f.run_id for f in findings.context["cl"].result_list} == {acme.pk}


def test_dashboard_runs_list_has_the_search_box(member_client):
    acme = reviewed([json_upload(acme_batch(), "acme.json")])
    seed = reviewed()
    response = member_client.get(reverse("reviews:runs"), {"q": "co_10"})
    assert 'name="q"' in response.content.decode()
    assert [r.pk for r in response.context["page"].object_list] == [acme.pk]
    other = member_client.get(reverse("reviews:runs"), {"q": "dl_201", "mode": "fresh"})
    assert [r.pk for r in other.context["page"].object_list] == [seed.pk]


@pytest.mark.integration  # Postgres-specific: jsonb containment and its GIN index
def test_record_id_search_uses_the_gin_index_on_postgres():
    if connection.vendor != "postgresql":
        pytest.skip("the GIN index exists on Postgres only")
    run = reviewed()
    Finding.objects.bulk_create(
        Finding(
            run=run,
            position=i,
            category="dedup",
            kind="company_same_domain",
            severity="warning",
            title=f"Duplicate {i}",
            detail="",
            record_ids=[f"co_{i}", f"co_{i + 1}"],
        )
        for i in range(20_000)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE reviews_finding")
        # At 20k findings a sequential scan may still be cheaper: what is checked here is
        # that the OR of id and title is answerable from the two indexes at all (at 154k
        # the planner picks them by itself: bench/search_scale.py).
        cursor.execute("SET LOCAL enable_seqscan = off")
    plan = search_runs(ReviewRun.objects.all(), "co_17").explain()
    assert "finding_record_ids_gin" in plan and "finding_title_trgm" in plan, plan
    assert "Seq Scan on reviews_finding" not in plan, plan
    findings_plan = search_findings(Finding.objects.order_by(), "Fabrikam").explain()
    assert "finding_title_trgm" in findings_plan, findings_plan
    assert "Seq Scan on reviews_finding" not in findings_plan, findings_plan
    assert list(search_runs(ReviewRun.objects.all(), "co_17")) == [run]


@pytest.mark.integration
def test_record_id_search_on_sqlite_matches_whole_ids(tmp_path):
    """The embedded mode has no jsonb containment: the id is matched as a JSON string."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env |= {
        "DJANGO_SETTINGS_MODULE": "revreview.settings",
        "DATA_DIR": str(tmp_path),
        "CELERY_TASK_ALWAYS_EAGER": "true",
    }

    def manage(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    assert manage("migrate", "--noinput").returncode == 0
    manage("review", "tests/data/seed-example.json")
    script = (
        "from reviews.models import ReviewRun, Finding\n"
        "from reviews.search import has_record_id, search_runs, search_findings\n"
        "runs = ReviewRun.objects.all()\n"
        # Titles name their records ("(co_202)"), so the id's exactness is the lookup's.
        "print(search_runs(runs, 'co_202').count(),"
        " Finding.objects.filter(has_record_id('co_20')).count(),"
        " search_findings(Finding.objects.all(), 'ct_201').count())\n"
    )
    result = manage("shell", "-c", script)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-3:] == ["1", "0", "1"]


def named_batch() -> dict:
    """HubSpot-style numeric ids; the names only in the records: a stale Fabrikam, Owen
    Price at Fabrikam with a Contoso email, a won Contoso deal without a close date."""
    return {
        "id": "names-1",
        "exportedAt": "2026-08-01T09:00:00Z",
        "companies": [
            {"id": "30117000100", "name": "Fabrikam", "domain": "fabrikam.example",
             "enrichedAt": "2025-01-01"},
            {"id": "30117000101", "name": "Contoso", "domain": "contoso.example",
             "enrichedAt": "2026-07-01"},
        ],
        "contacts": [
            {"id": "30117000202", "email": "owen@contoso.example", "firstName": "Owen",
             "lastName": "Price", "companyId": "30117000100"},
        ],
        "deals": [
            {"id": "30117000300", "name": "Northwind renewal", "amount": 410000,
             "stage": "closedwon", "companyId": "30117000101", "contactIds": []},
        ],
        "pipelines": [
            {"id": "default", "stages": [
                {"id": "appointmentscheduled"}, {"id": "closedwon", "closed": True, "won": True},
                {"id": "closedlost", "closed": True, "won": False}]}
        ],
    }  # fmt: skip


def test_findings_name_their_records_and_are_found_by_company_person_and_deal(
    admin_client, member_client
):
    named = reviewed([json_upload(named_batch(), "export.json")])
    other = reviewed()
    titles = set(Finding.objects.filter(run=named).values_list("title", flat=True))
    assert "Contact Owen Price (30117000202) may be attached to the wrong company" in titles
    assert 'Won deal "Northwind renewal" (30117000300) has no close date' in titles
    assert any(t.startswith("Company Fabrikam (30117000100) was last enriched") for t in titles)
    findings, runs = Finding.objects.all(), ReviewRun.objects.all()
    for word in ("Fabrikam", "owen", "Price", '"Northwind renewal"'):
        found = search_findings(findings, word)
        assert found and {f.run_id for f in found} == {named.pk}, word
        assert set(search_runs(runs, word)) == {named}, word
    assert set(search_runs(runs, "Vertex")) == {other}  # the seed's company

    admin = admin_client.get(reverse("admin:reviews_finding_changelist"), {"q": "Fabrikam"})
    assert admin.context["cl"].result_count == 1
    assert "Company Fabrikam (30117000100)" in admin.content.decode()
    listed = member_client.get(reverse("reviews:runs"), {"q": "Owen"})
    assert list(listed.context["runs"]) == [named]
