"""A Salesforce org's Data Export through the real submit path (Postgres): stored,
reviewed, and its run page in Salesforce's words; its fix plan's lead tasks."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from reviews.engine.ingest import UploadedFile
from reviews.models import Dataset, Finding
from reviews.orchestration.fixes.fixplan import plan_for_run
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from reviews.reports.fixplan_export import csv_lines
from reviews.samplegen.salesforce_org import AS_OF, data_export, reports
from tests.web.conftest import reviewed

pytestmark = pytest.mark.django_db


@pytest.fixture
def salesforce_run(postgres):
    return reviewed([UploadedFile(name, data) for name, data in data_export().items()])


def test_the_run_page_says_account_and_opportunity(member_client, salesforce_run):
    assert salesforce_run.batch.source == "salesforce-export"
    page = member_client.get(reverse("reviews:run", args=[salesforce_run.pk])).content.decode()
    assert "1 account group: sharing a domain" in page  # the kind's heading
    assert "account groups: sharing a domain" in page  # each finding's kind
    assert "1 opportunity: won without a close date" in page
    assert "company groups" not in page and "deals: won" not in page
    assert "4 accounts, 5 contacts, 5 opportunities and 5 leads" in page  # the summary
    assert "4 accounts, 5 contacts, 5 opportunities, 5 leads ·" in page  # the heading
    titles = set(Finding.objects.filter(run=salesforce_run).values_list("title", flat=True))
    assert any(t.startswith("2 accounts share the domain vertexrobotics.example") for t in titles)


def test_the_lead_findings_are_stored_and_are_tasks_on_the_lead(member_client, salesforce_run):
    kinds = set(Finding.objects.filter(run=salesforce_run).values_list("kind", flat=True))
    assert {"lead_already_contact", "lead_same_email", "lead_no_owner"} <= kinds
    assert "lead_inactive_owner" in kinds
    text = member_client.get(reverse("reviews:tasks_csv", args=[salesforce_run.pk])).content
    tasks = list(csv.DictReader(io.StringIO(text.decode())))
    inactive = [t for t in tasks if "inactive user" in t["problem"]]
    assert inactive and inactive[0]["property"] == "OwnerId"
    # Every task names the field by its Salesforce API name, not HubSpot's property.
    won = [t for t in tasks if t["kind"] == "won_without_close_date"]
    assert won and won[0]["property"] == "CloseDate" and won[0]["object"] == "deals"
    assert not {t["property"] for t in tasks} & {"closedate", "amount", "dealstage"}


def test_duplicate_leads_are_a_lead_merge_not_a_task(salesforce_run):
    plan = plan_for_run(salesforce_run)
    leads = [m for m in plan.merges if m.object == "leads"]
    assert [(m.kind, len(m.merge)) for m in leads] == [("lead_same_email", 1)]
    assert not [t for t in plan.tasks if t.kind == "lead_same_email"]
    rows = list(csv.reader(io.StringIO("".join(csv_lines(plan, "salesforce-merges")))))
    lead_rows = [r for r in rows[1:] if r[3] == "Lead"]
    assert lead_rows and lead_rows[0][0] == leads[0].primary and lead_rows[0][4] == "yes"


def test_a_salesforce_dataset_learns_its_stages_and_a_later_report_reads_by_them(postgres):
    def sync(files: dict[str, bytes]):
        uploads = [UploadedFile(name, data) for name, data in files.items()]
        submission = submit(uploads, as_of=AS_OF, dataset="northwind-sf", dispatch=False)
        assert submission.accepted, submission.errors
        start_review.apply(kwargs={"run_id": submission.run.pk})
        submission.run.refresh_from_db()
        return submission.run

    first = sync(data_export(loader=True))
    dataset = Dataset.objects.get(name="northwind-sf")
    (stages,) = dataset.pipelines
    assert "Pilot Running" in {s["id"] for s in stages["stages"]}
    assert first.batch.stage_source == "export"
    later = sync(reports())
    assert later.batch.source == "salesforce-report"
    assert later.batch.stage_source == "dataset"
    assert {f.kind for f in Finding.objects.filter(run=later)} == {
        f.kind for f in Finding.objects.filter(run=first)
    }


def test_a_file_nothing_recognises_is_a_warning_on_the_run_page(member_client, postgres):
    task = b'"Id","Subject","WhatId"\n"00T5g00000AbCdE","Call",""\n'
    files = [UploadedFile(n, d) for n, d in data_export().items()]
    run = reviewed([*files, UploadedFile("extract.csv", task)])
    assert [w["code"] for w in run.batch.warnings] == ["unread_file"]
    page = member_client.get(reverse("reviews:run", args=[run.pk])).content.decode()
    assert "extract.csv was not read: neither its name nor its columns say" in page


def test_leads_are_counted_and_the_text_reports_counts_are_in_salesforces_words(salesforce_run):
    from reviews.engine.vocabulary import crm_of
    from reviews.reports.report import run_report, text_report

    batch = salesforce_run.batch
    assert batch.counts == {"companies": 4, "contacts": 5, "deals": 5, "leads": 5}
    text = text_report(run_report(salesforce_run), "WE.ZIP", crm_of(batch.source))
    assert "batch WE.ZIP: 4 accounts, 5 contacts, 5 opportunities, 5 leads" in text
    assert run_report(salesforce_run)["batch"]["counts"]["leads"] == 5


def test_the_run_page_offers_the_salesforce_merge_csv_and_no_hubspot_merges(admin_client, postgres):
    """As the fix plan page does: a Salesforce sync's merges are not applied in HubSpot,
    and its run page links the Salesforce merge CSV (docs/output.md)."""
    files = [UploadedFile(name, data) for name, data in data_export().items()]
    submission = submit(files, dispatch=False, no_cache=True, dataset="sf-org")
    start_review.apply(kwargs={"run_id": submission.run.pk})
    run = submission.run
    page = admin_client.get(reverse("reviews:run", args=[run.pk])).content.decode()
    csv_url = reverse("reviews:salesforce_merges_csv", args=[run.pk])
    assert f'id="salesforce-merges-csv" href="{csv_url}"' in page
    assert "Apply merges in HubSpot" not in page
    assert reverse("reviews:apply_merges", args=[run.pk]) not in page
    fix_plan = page.split('id="fix-plan"')[1].split(">")[0]
    assert "links to Salesforce" in fix_plan

    hubspot = reviewed()
    hubspot.batch.dataset = Dataset.objects.get(name="sf-org")  # any dataset: staff may apply
    hubspot.batch.save(update_fields=["dataset"])
    page = admin_client.get(reverse("reviews:run", args=[hubspot.pk])).content.decode()
    assert "Apply merges in HubSpot" in page and 'id="salesforce-merges-csv"' in page
