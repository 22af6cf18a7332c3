"""The dashboard's pages and actions, through Django's test client (tasks run eagerly)."""

import csv
import io
import json
from datetime import timedelta

import orjson
import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from ledger.models import LedgerEntry
from reviews.engine.coverage import kind_words
from reviews.models import AgentRun, Batch, BatchFile, Finding, ReviewRun, Verdict
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.store.blob_store import file_bytes
from reviews.reports.report import run_report
from reviews.templatetags.words import MODES, TIERS
from tests.uploads import DATA, json_upload, upload
from tests.web.conftest import queued, reviewed

pytestmark = pytest.mark.django_db

BROKEN = {"companies": [{"name": "no id"}], "contacts": [], "deals": []}


def seed_file() -> SimpleUploadedFile:
    return SimpleUploadedFile("seed-example.json", (DATA / "seed-example.json").read_bytes())


def htmx_get(client, url: str, **params):
    return client.get(url, params, headers={"HX-Request": "true"})


# --- access -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "name", "args"),
    [
        ("get", "reviews:upload", []),
        ("post", "reviews:upload", []),
        ("get", "reviews:runs", []),
        ("get", "reviews:run", [1]),
        ("get", "reviews:batch", [1]),
        ("get", "reviews:findings_csv", [1]),
        ("get", "reviews:run_json", [1]),
        ("post", "reviews:rerun", [1]),
        ("post", "reviews:break_glass", [1]),
    ],
)
def test_every_page_redirects_anonymous_users_to_login(client, method, name, args):
    url = reverse(name, args=args)
    response = getattr(client, method)(url)
    assert response.status_code == 302
    assert response.url == f"/accounts/login/?next={url}"


def test_login_page_renders_a_form(client):
    response = client.get("/accounts/login/")
    assert response.status_code == 200
    assert b'name="username"' in response.content
    assert b"csrfmiddlewaretoken" in response.content


def test_non_staff_user_is_refused_the_admin(member_client):
    response = member_client.get("/admin/reviews/reviewrun/")
    assert response.status_code == 302
    assert response.url.startswith("/admin/login/")


def test_navigation_links_pages_and_logs_out_by_post(member_client, admin_client):
    page = member_client.get(reverse("reviews:upload")).content.decode()
    assert 'href="/runs/"' in page and 'href="/spend/"' in page
    assert 'href="/admin/"' not in page  # staff only
    assert '<form method="post" action="/accounts/logout/">' in page
    assert 'hx-headers=\'{"x-csrftoken": "' in page
    assert 'href="/admin/"' in admin_client.get(reverse("reviews:upload")).content.decode()


# --- upload -------------------------------------------------------------------------


def test_upload_of_the_seed_example_creates_a_run_and_redirects_to_it(
    member_client, member, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = member_client.post(reverse("reviews:upload"), {"files": seed_file()})
    run = ReviewRun.objects.get()
    assert response.status_code == 302
    assert response.url == reverse("reviews:run", args=[run.pk])
    assert run.created_by == member
    assert run.batch.file_name == "seed-example.json"
    run.refresh_from_db()
    assert run.status == ReviewRun.Status.DONE
    page = member_client.get(response.url).content.decode()
    assert "Approved with comments" in page
    assert "company_same_domain" in page


def test_upload_of_a_broken_file_names_record_and_field_and_keeps_the_batch(member_client):
    broken = SimpleUploadedFile("broken.json", json.dumps(BROKEN).encode())
    response = member_client.post(reverse("reviews:upload"), {"files": broken})
    assert response.status_code == 400
    batch = Batch.objects.get()
    assert batch.status == Batch.Status.REJECTED
    assert file_bytes(BatchFile.objects.get(batch=batch)) == json.dumps(BROKEN).encode()
    assert ReviewRun.objects.count() == 0
    page = response.content.decode()
    assert "Batch rejected" in page
    assert "<code>companies[0].id</code>" in page
    assert reverse("reviews:batch", args=[batch.pk]) in page


def test_upload_of_csv_files_together_is_one_batch(
    member_client, django_capture_on_commit_callbacks
):
    companies = SimpleUploadedFile(
        "companies.csv", b"Record ID,Company name,Company Domain Name\n1,Acme,acme.example\n"
    )
    contacts = SimpleUploadedFile("contacts.csv", b"Record ID,Email\n11,ann@acme.example\n")
    with django_capture_on_commit_callbacks(execute=True):
        response = member_client.post(
            reverse("reviews:upload"),
            {"files": [companies, contacts], "as_of": "2026-08-01T09:00"},
        )
    assert response.status_code == 302, response.content.decode()[:2000]
    batch = Batch.objects.get()
    assert batch.file_name == "companies.csv, contacts.csv"
    assert batch.as_of.isoformat() == "2026-08-01T09:00:00+00:00"


def test_upload_larger_than_the_limit_shows_a_clear_error(member_client, settings):
    settings.MAX_UPLOAD_BYTES = 10
    response = member_client.post(reverse("reviews:upload"), {"files": seed_file()})
    assert response.status_code == 413
    assert "the limit is 10 bytes (MAX_UPLOAD_BYTES)" in response.content.decode()
    assert Batch.objects.count() == 0


def test_upload_over_the_rate_limit_is_served_by_failback_then_refused_with_429(
    member_client, settings, redis_url, django_capture_on_commit_callbacks
):
    settings.RATE_LIMIT_PER_HOUR = 1
    with django_capture_on_commit_callbacks(execute=True):
        first = member_client.post(reverse("reviews:upload"), {"files": seed_file()})
        second = member_client.post(reverse("reviews:upload"), {"files": seed_file()})
    third = member_client.post(reverse("reviews:upload"), {"files": seed_file()})
    assert (first.status_code, second.status_code) == (302, 302)
    failback = ReviewRun.objects.get(pk=int(second.url.rstrip("/").rsplit("/", 1)[1]))
    assert failback.mode == ReviewRun.Mode.FAILBACK
    assert "rate limit" in failback.reason
    assert "failback" in member_client.get(second.url).content.decode()
    assert third.status_code == 429
    assert int(third["Retry-After"]) > 0
    assert Batch.objects.count() == 3  # the refused upload is kept too
    assert ReviewRun.objects.count() == 2


def test_rerun_over_the_rate_limit_is_refused_with_429(member_client, settings, redis_url):
    run = reviewed()
    settings.RATE_LIMIT_PER_HOUR = 1
    codes = [
        member_client.post(reverse("reviews:rerun", args=[run.pk])).status_code for _ in range(3)
    ]
    assert codes == [302, 302, 429]


def test_upload_without_a_file_is_refused(member_client):
    response = member_client.post(reverse("reviews:upload"), {})
    assert response.status_code == 400
    assert "This field is required." in response.content.decode()
    assert Batch.objects.count() == 0


def test_upload_page_lists_recent_uploads(member_client):
    run = reviewed()
    page = member_client.get(reverse("reviews:upload")).content.decode()
    assert reverse("reviews:run", args=[run.pk]) in page
    assert "seed-example.json" in page


def test_batch_page_lists_the_errors_of_a_rejected_batch(member_client):
    from reviews.orchestration.intake.submit import submit

    batch = submit([json_upload(BROKEN)]).batch
    page = member_client.get(reverse("reviews:batch", args=[batch.pk])).content.decode()
    assert "Rejected: 1 problem" in page
    assert "<code>companies[0].id</code>" in page
    assert batch.sha256 in page


# --- the run page -------------------------------------------------------------------


def test_run_page_polls_with_200_while_running_and_stops_with_286_when_done(member_client):
    run = queued()
    url = reverse("reviews:run", args=[run.pk])
    response = htmx_get(member_client, url)
    assert response.status_code == 200
    assert 'hx-trigger="every 500ms"' in response.content.decode()
    assert "<html" not in response.content.decode()  # the partial only

    from reviews.orchestration.run.tasks import start_review

    start_review.apply(kwargs={"run_id": run.pk})
    response = htmx_get(member_client, url)
    assert response.status_code == 286
    assert "hx-trigger" not in response.content.decode()
    assert 'id="verdict" data-verdict="approve_with_comments"' in response.content.decode()


def test_run_page_shows_a_heartbeat_for_an_agent_still_thinking(member_client, settings):
    settings.LLM_BASE_URL = "http://127.0.0.1:9/v1"
    run = queued()
    ReviewRun.objects.filter(pk=run.pk).update(specialists=["dedup"])
    AgentRun.objects.filter(run=run, agent__in=["dedup", "pipeline"]).update(
        status=AgentRun.Status.RUNNING, started_at=timezone.now() - timedelta(seconds=12)
    )
    page = member_client.get(reverse("reviews:run", args=[run.pk])).content.decode()
    assert page.count("thinking… 12 s") == 1  # dedup has a model pass; pipeline does not
    assert page.count("running… 12 s") == 1
    assert "Reviewing…" in page


def test_nobody_is_thinking_in_rules_only_mode(member_client, settings):
    settings.LLM_BASE_URL = None
    run = queued()
    ReviewRun.objects.filter(pk=run.pk).update(specialists=["dedup"])
    AgentRun.objects.filter(run=run, agent="dedup").update(
        status=AgentRun.Status.RUNNING, started_at=timezone.now() - timedelta(seconds=3)
    )
    page = member_client.get(reverse("reviews:run", args=[run.pk])).content.decode()
    assert "thinking…" not in page
    assert "running… 3 s" in page


def test_run_page_shows_each_agent_with_its_ledger_usage(member_client):
    run = reviewed()
    for tokens in (1000, 500):
        LedgerEntry.objects.create(
            run=run,
            agent="dedup",
            model_requested="google/gemini-2.5-flash-lite",
            model="google/gemini-2.5-flash-lite",
            input_tokens=tokens,
            output_tokens=100,
            cost_micros=250,
            outcome=LedgerEntry.Outcome.OK,
        )
    response = member_client.get(reverse("reviews:run", args=[run.pk]))
    agents = {a.agent: a for a in response.context["agents"]}
    assert set(agents) == {"dedup", "attribution", "pipeline", "freshness", "coordinator"}
    assert (agents["dedup"].calls, agents["dedup"].tokens) == (2, 1700)
    assert str(agents["dedup"].usd) == "0.0005"
    assert agents["pipeline"].calls == 0
    assert all(a.status == "done" for a in agents.values())
    page = response.content.decode()
    assert "$0.0005" in page and "$0.000500" not in page
    assert "Analyst baseline" in page
    assert response.context["call_count"] == 2
    assert "model pass: <strong>" in page and "(rules only)" not in page


def test_run_page_says_when_no_model_reviewed(member_client):
    run = reviewed()
    page = member_client.get(reverse("reviews:run", args=[run.pk])).content.decode()
    assert "model pass: <strong>none</strong> (rules only)" in page


def test_run_page_of_a_cached_run_links_the_run_it_reuses(member_client):
    source = reviewed()
    run = submit([upload("seed-example.json")], dispatch=False).run
    assert run.mode == "cached" and run.reused_run_id == source.pk
    page = member_client.get(reverse("reviews:run", args=[run.pk])).content.decode()
    link = f'served from <a href="{reverse("reviews:run", args=[source.pk])}">run #{source.pk}</a>'
    assert link in page
    assert "model pass:" not in page
    assert "this run reuses the review of <a href=" in page
    assert "the rule detectors reviewed this batch on their own" not in page


def test_run_page_labels_a_failback_run_with_its_reason(member_client):
    run = reviewed()
    ReviewRun.objects.filter(pk=run.pk).update(mode="failback", reason="daily token budget spent")
    page = member_client.get(reverse("reviews:run", args=[run.pk])).content.decode()
    assert 'class="badge mode-failback" title="Served by failback: ' in page  # the words
    assert '>failback</span> <span class="small">(daily token budget spent)' in page


def test_run_page_filters_findings_by_category_with_and_without_htmx(member_client):
    run = reviewed()
    categories = set(run.findings.values_list("category", flat=True))
    assert {"dedup"} < categories  # the seed has findings in more than one category
    url = reverse("reviews:run", args=[run.pk])
    page = member_client.get(url, {"category": "dedup"})
    kinds = {f.kind for f in page.context["findings_page"].object_list}
    assert kinds == set(run.findings.filter(category="dedup").values_list("kind", flat=True))
    assert f'href="{url}?category=dedup" hx-get="{url}?category=dedup"' in page.content.decode()

    partial = htmx_get(member_client, url, category="pipeline")
    assert partial.status_code == 286  # done: the swap happens and nothing polls
    assert {f.category for f in partial.context["findings_page"].object_list} == {"pipeline"}


def test_run_page_paginates_findings_keeping_the_filter(member_client):
    run = reviewed()
    Finding.objects.bulk_create(
        Finding(
            run=run,
            position=1000 + i,
            category="dedup",
            kind="company_same_name",
            severity="suggestion",
            title=f"Maybe the same company {i}",
            detail="names match",
            record_ids=[f"co_{i}"],
        )
        for i in range(150)
    )
    url = reverse("reviews:run", args=[run.pk])
    first = member_client.get(url, {"category": "dedup"})
    assert len(first.context["findings_page"].object_list) == 100
    assert 'href="?category=dedup&amp;page=2"' in first.content.decode()
    second = member_client.get(url, {"category": "dedup", "page": 2})
    assert second.context["findings_page"].number == 2
    assert {f.category for f in second.context["findings_page"].object_list} == {"dedup"}


def test_run_page_of_an_unknown_run_is_404(member_client):
    assert member_client.get(reverse("reviews:run", args=[999999])).status_code == 404


# --- actions ------------------------------------------------------------------------


def test_findings_csv_lists_every_finding_in_order(member_client):
    run = reviewed()
    response = member_client.get(reverse("reviews:findings_csv", args=[run.pk]))
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert f'filename="run-{run.pk}-findings.csv"' in response["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0] == [
        "position",
        "severity",
        "category",
        "kind",
        "title",
        "detail",
        "record_ids",
        "suggested_fix",
        "confidence",
        "amount_at_risk",
        "currency",
        "source",
        "fingerprint",
        "status",
        "first_seen",
        "owners",
        "record_sources",
    ]
    findings = list(run.findings.order_by("position"))
    assert len(rows) == len(findings) + 1
    first = findings[0]
    assert [row[0] for row in rows[1:]] == [str(n) for n in range(1, len(findings) + 1)]
    assert rows[1][:5] == [
        str(first.position + 1),
        first.severity,
        first.category,
        first.kind,
        first.title,
    ]
    assert rows[1][6] == ";".join(first.record_ids)
    assert rows[1][11] == first.source


def test_findings_csv_exports_what_the_filtered_page_shows(member_client):
    run = reviewed()  # two dedup findings and one pipeline finding
    page = member_client.get(reverse("reviews:run", args=[run.pk]), {"category": "dedup"})
    shown = [f.title for f in page.context["findings_page"].object_list]
    csv_url = reverse("reviews:findings_csv", args=[run.pk]) + "?category=dedup"
    assert csv_url in page.content.decode()
    response = member_client.get(csv_url)
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [row[4] for row in rows[1:]] == shown
    assert {row[2] for row in rows[1:]} == {"dedup"} and len(shown) == 2
    assert f'filename="run-{run.pk}-dedup-findings.csv"' in response["Content-Disposition"]
    unknown = member_client.get(reverse("reviews:findings_csv", args=[run.pk]), {"category": "x"})
    assert len(list(unknown.streaming_content)) == 1 + run.findings.count()


def test_run_json_is_the_spec_document_the_cli_prints(member_client):
    run = reviewed()
    response = member_client.get(reverse("reviews:run_json", args=[run.pk]))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    body = json.loads(b"".join(response.streaming_content))
    assert body == json.loads(orjson.dumps(run_report(run)))  # the report built whole
    assert list(body) == ["batch", "run", "verdict", "summary", "findings", "ledger"]
    assert body["run"]["id"] == run.pk
    assert body["verdict"] == run.verdict.decision
    assert [f["kind"] for f in body["findings"]] == list(
        run.findings.order_by("position").values_list("kind", flat=True)
    )
    assert (
        reverse("reviews:run_json", args=[run.pk])
        in member_client.get(reverse("reviews:run", args=[run.pk])).content.decode()
    )


def test_findings_csv_defuses_cells_a_spreadsheet_would_run(member_client):
    run = reviewed()
    Finding.objects.filter(run=run, position=0).update(title='=HYPERLINK("http://x")')
    body = b"".join(
        member_client.get(reverse("reviews:findings_csv", args=[run.pk])).streaming_content
    )
    row = next(r for r in csv.reader(io.StringIO(body.decode())) if r[0] == "1")
    assert row[4] == '\'=HYPERLINK("http://x")'


def test_rerun_creates_a_new_fresh_run_and_redirects_to_it(
    member_client, member, django_capture_on_commit_callbacks
):
    run = reviewed()
    ReviewRun.objects.filter(pk=run.pk).update(mode="cached")
    with django_capture_on_commit_callbacks(execute=True):
        response = member_client.post(reverse("reviews:rerun", args=[run.pk]))
    new = ReviewRun.objects.exclude(pk=run.pk).get()
    assert response.url == reverse("reviews:run", args=[new.pk])
    assert (new.batch_id, new.mode, new.created_by) == (run.batch_id, "fresh", member)
    new.refresh_from_db()
    assert new.status == ReviewRun.Status.DONE


def test_rerun_needs_post(member_client):
    run = reviewed()
    assert member_client.get(reverse("reviews:rerun", args=[run.pk])).status_code == 405


def test_break_glass_is_refused_to_non_staff(member_client):
    run = reviewed()
    response = member_client.post(
        reverse("reviews:break_glass", args=[run.pk]), {"reason": "ship it"}
    )
    assert response.status_code == 403
    assert not Verdict.objects.get(run=run).is_overridden
    page = member_client.get(reverse("reviews:run", args=[run.pk])).content.decode()
    assert "Break glass…" not in page


def test_break_glass_needs_a_reason(admin_client):
    run = reviewed()
    response = admin_client.post(
        reverse("reviews:break_glass", args=[run.pk]), {"reason": "  "}, follow=True
    )
    assert "Break glass needs a reason" in response.content.decode()
    assert not Verdict.objects.get(run=run).is_overridden


def test_break_glass_records_the_override_beside_the_original_decision(admin_client, admin_user):
    run = reviewed()
    response = admin_client.post(
        reverse("reviews:break_glass", args=[run.pk]),
        {"reason": "duplicates are a known HubSpot sync artefact"},
        follow=True,
    )
    verdict = Verdict.objects.get(run=run)
    assert verdict.decision == "approve_with_comments"  # never changed
    assert verdict.effective_decision == "approve"
    assert verdict.overridden_by == admin_user
    assert verdict.override_reason == "duplicates are a known HubSpot sync artefact"
    assert verdict.overridden_at is not None
    page = response.content.decode()
    assert "Approved by break glass" in page
    assert 'id="original-verdict">Approved with comments</span>' in page
    assert "duplicates are a known HubSpot sync artefact" in page
    assert f"overridden by <strong>{admin_user.username}</strong>" in page


def test_break_glass_twice_keeps_the_first_override(admin_client, admin_user):
    run = reviewed()
    url = reverse("reviews:break_glass", args=[run.pk])
    admin_client.post(url, {"reason": "first"})
    response = admin_client.post(url, {"reason": "second"}, follow=True)
    assert "already was" in response.content.decode()
    assert Verdict.objects.get(run=run).override_reason == "first"


# --- the runs list ----------------------------------------------------------------------


def test_runs_list_shows_newest_first_with_counts_verdict_and_cost(member_client):
    older, newer = reviewed(), reviewed()
    LedgerEntry.objects.create(
        run=newer, agent="coordinator", model_requested="m", cost_micros=1_234_000, outcome="ok"
    )
    response = member_client.get(reverse("reviews:runs"))
    runs = list(response.context["page"].object_list)
    assert [r.pk for r in runs] == [newer.pk, older.pk]
    assert runs[0].findings_total == newer.findings.count()
    page = response.content.decode()
    assert "$1.23" in page
    assert "approve with comments" in page
    assert "seed-example" in page  # the batch's external id


def test_runs_list_filters_by_verdict_mode_tier_and_date(member_client, admin_user):
    approved = reviewed([json_upload({"companies": [], "contacts": [], "deals": []})])
    commented = reviewed()
    broken_glass = reviewed()
    Verdict.objects.filter(run=broken_glass).update(
        overridden_by=admin_user, override_reason="ok", overridden_at=timezone.now()
    )
    ReviewRun.objects.filter(pk=commented.pk).update(mode="cached", tier="full")
    ReviewRun.objects.filter(pk=approved.pk).update(created_at=timezone.now() - timedelta(days=3))

    def listed(**params) -> set[int]:
        response = member_client.get(reverse("reviews:runs"), params)
        return {r.pk for r in response.context["page"].object_list}

    assert listed() == {approved.pk, commented.pk, broken_glass.pk}
    assert listed(verdict="approve") == {approved.pk, broken_glass.pk}
    assert listed(verdict="approve_with_comments") == {commented.pk}
    assert listed(verdict="break_glass") == {broken_glass.pk}
    assert listed(mode="cached") == {commented.pk}
    assert listed(tier="full") == {commented.pk}
    today = timezone.now().date()
    assert listed(date_from=today.isoformat()) == {commented.pk, broken_glass.pk}
    assert listed(date_to=(today - timedelta(days=1)).isoformat()) == {approved.pk}


def test_runs_list_htmx_request_gets_the_results_partial(member_client):
    reviewed()
    response = htmx_get(member_client, reverse("reviews:runs"), mode="fresh")
    body = response.content.decode()
    assert body.lstrip().startswith('<div id="runs-results">')
    assert "<html" not in body


def test_runs_list_queries_do_not_grow_with_rows(member_client, django_assert_max_num_queries):
    for _ in range(6):
        reviewed()
    with django_assert_max_num_queries(8):
        response = member_client.get(reverse("reviews:runs"))
    assert len(response.context["page"].object_list) == 6


def test_runs_list_paginates(member_client, monkeypatch):
    monkeypatch.setattr("reviews.web.views.RUNS_PER_PAGE", 2)
    for _ in range(3):
        reviewed()
    page = member_client.get(reverse("reviews:runs"), {"page": 2}).context["page"]
    assert (page.number, len(page.object_list), page.paginator.num_pages) == (2, 1, 2)


# --- the demo login -------------------------------------------------------------------


def test_demo_command_creates_a_staff_login_and_prints_it(django_user_model, monkeypatch):
    monkeypatch.setenv("DEMO_PASSWORD", "let-me-in-42")
    out = io.StringIO()
    call_command("demo", stdout=out)
    user = django_user_model.objects.get(username="demo")
    assert user.is_staff and user.is_superuser
    assert user.check_password("let-me-in-42")
    assert "username demo, password let-me-in-42" in out.getvalue()
    monkeypatch.delenv("DEMO_PASSWORD")
    call_command("demo", stdout=io.StringIO())  # refreshes, to the documented default
    assert django_user_model.objects.get(username="demo").check_password("revreview-demo")


def test_recent_uploads_show_the_verdict_of_the_latest_run(member_client):
    run = reviewed()
    rejected = submit([json_upload(BROKEN, "broken.json")], dispatch=False).batch
    page = member_client.get(reverse("reviews:upload"))
    recent = {b.pk: b for b in page.context["recent"]}
    assert recent[run.batch_id].latest.verdict.decision == "approve_with_comments"
    assert recent[rejected.pk].latest is None
    html = page.content.decode()
    assert "<th>Verdict</th>" in html and ">Approved with comments<" in html
    assert ">rejected<" in html and ">accepted<" not in html


def test_a_missing_page_is_a_styled_404(member_client):
    response = member_client.get("/runs/999999/")
    assert response.status_code == 404
    page = response.content.decode()
    assert "<h1>Not found</h1>" in page and "revreview.css" in page
    assert "/runs/999999/" in page and 'href="/runs/"' in page


def test_the_favicon_is_served(member_client, client):
    page = member_client.get(reverse("reviews:upload")).content.decode()
    assert 'rel="icon" href="/static/favicon.svg"' in page
    redirect = client.get("/favicon.ico")
    assert (redirect.status_code, redirect["Location"]) == (301, "/static/favicon.svg")


def test_upload_page_says_it_takes_xlsx_and_xls(member_client):
    import re

    from reviews.engine.ingest import _EXTENSIONS

    page = member_client.get(reverse("reviews:upload")).content.decode()
    dropzone = page.split('id="dropzone"', 1)[1].split("</div>", 2)[1]
    assert "XLSX" in dropzone and "XLS" in dropzone.replace("XLSX", "")
    formats = page.split('class="formats"', 1)[1].split("</ul>", 1)[0]
    assert "XLSX" in formats and "XLS" in formats.replace("XLSX", "")
    # The file picker offers every extension the ingest reads.
    accept = re.search(r'<input type="file" name="files" accept="([^"]+)"', page)[1].split(",")
    assert set(_EXTENSIONS) <= set(accept)


def test_docs_api_names_the_top_bar_entry_that_exists(member_client):
    """docs/api.md tells where to make a token by the labels the top bar really shows."""
    import re

    from tests.services import ROOT

    page = member_client.get(reverse("reviews:upload")).content.decode()
    topbar = page.split('<header class="topbar">', 1)[1].split("</header>", 1)[0]
    links = {
        text.strip(): href
        for href, text in re.findall(r'<a href="([^"]+)"[^>]*>([^<]+)</a>', topbar)
    }
    buttons = set(re.findall(r"<button[^>]*>([^<]+)</button>", topbar))
    api = " ".join((ROOT / "docs" / "api.md").read_text().split())
    where = api.split("**Tokens.**", 1)[1].split(". ", 1)[0]
    named = re.findall(r"\*([^*]+)\*", where)
    assert "API tokens" in named, where
    assert all(label in links or label in buttons for label in named), (named, links, buttons)
    assert f"`{links['API tokens']}`" in where  # and its address, as the README gives it
    assert "top right" not in where and "menu" not in where.lower(), where


def test_run_page_names_kinds_and_explains_mode_and_tier_in_words(member_client):
    run = reviewed()
    page = member_client.get(reverse("reviews:run", args=[run.pk])).content.decode()
    kind = run.findings.first().kind
    label = kind_words(kind, settings.REVIEW_RULES)
    assert label != kind and f'<span class="f-kind" title="{kind}">{label}</span>' in page
    assert f'title="{TIERS[run.tier]}"' in page and f'title="{MODES[run.mode]}"' in page
