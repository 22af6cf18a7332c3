"""A fix plan for a dataset connected to Salesforce: the merge plan as Salesforce's merge
takes it (a master, then one or two ids: three records at most), merges refused rather
than sent (Salesforce merges only through SOAP), and the owners' to-do list created as
Salesforce Tasks after a staff member approves, each finding once."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from connectors import pulls, registry
from connectors.merge_steps import dry_run as merge_dry_run
from connectors.merges import apply_merges
from connectors.models import SentTask
from connectors.owner_tasks import dry_run, send_tasks
from connectors.write_access import MergeNotAllowed, configured_client
from reviews.engine.fixes.fixplan import Merge
from reviews.engine.fixes.salesforce_merges import merge_requests
from reviews.models import Dataset
from reviews.orchestration.fixes.fixplan import plan_for_run
from reviews.reports.fixplan_export import csv_lines
from tests.connectors.salesforce_org import small_org
from tests.connectors.salesforce_standin import credentials_for, serving
from tests.connectors.test_merges import sync
from tests.engine.ingest.hubspot_exports import AS_OF, BATCH

SOBJECT = {"companies": "Account", "contacts": "Contact", "deals": "Opportunity"}


def merge(object_type: str, primary: str, *merged: str) -> Merge:
    return Merge(object_type, primary, list(merged), "same domain", "fp1", "duplicate", "t")


def test_a_cluster_becomes_requests_of_at_most_three_records_into_one_master():
    requests = merge_requests([merge("companies", "001A", "001B", "001C", "001D", "001E")])
    assert [(r.sobject, r.master, r.merged) for r in requests] == [
        ("Account", "001A", ("001B", "001C")),
        ("Account", "001A", ("001D", "001E")),
    ]
    assert merge_requests([merge("deals", "006A", "006B")])[0].sobject == "Opportunity"


def test_the_salesforce_merge_csv_puts_the_master_first():
    plan = type("Plan", (), {"merges": [merge("contacts", "003A", "003B", "003C", "003D")]})
    rows = list(csv.reader(io.StringIO("".join(csv_lines(plan, "salesforce-merges")))))
    assert rows[0][:4] == ["MasterRecordId", "RecordToMergeId1", "RecordToMergeId2", "ObjectType"]
    assert [r[:5] for r in rows[1:]] == [
        ["003A", "003B", "003C", "Contact", "yes"],
        ["003A", "003D", "", "Contact", "yes"],
    ]
    deals = type("Plan", (), {"merges": [merge("deals", "006A", "006B")]})
    assert "no: Salesforce merges Accounts" in "".join(csv_lines(deals, "salesforce-merges"))


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("ops", is_staff=True, password="x-pass-12345")


@pytest.mark.django_db
def test_tasks_go_to_salesforce_once_and_merges_are_exported_not_sent(
    postgres, settings, staff, client
):
    run = sync(BATCH, AS_OF)
    org = small_org()
    plan = plan_for_run(run)
    for task in plan.tasks:  # the org holds the records the run's findings are on
        rid = task.merged_into or task.record_id
        org.records[SOBJECT[task.object]].setdefault(rid, {"Id": rid})
    with serving(org, settings) as api:
        sealed = registry.credentials_from("salesforce", credentials_for(api))
        pulls.connect(Dataset.objects.get(name="acme"), sealed, provider="salesforce")
        salesforce = configured_client(run.batch.dataset)
        with pytest.raises(MergeNotAllowed, match="SOAP API's merge"):
            apply_merges(run, None, user=staff, client=salesforce)
        with pytest.raises(MergeNotAllowed, match="Salesforce merge CSV"):
            merge_dry_run(run, user=staff, client=salesforce)
        assert dry_run(run, user=staff) and not org.tasks
        sent = send_tasks(run, user=staff, client=salesforce)
        again = send_tasks(run, user=staff, client=salesforce)
        salesforce.close()
    assert sent and {s.outcome for s in sent} == {"created"}
    assert {s.outcome for s in again} == {"created"} and len(org.tasks) == len(sent)
    assert SentTask.objects.count() == len(sent)
    for step in sent:
        made = org.tasks[step.task_id]
        link = "WhoId" if step.task.object == "contacts" else "WhatId"
        assert made[link] == (step.task.merged_into or step.task.record_id)
        assert made["Subject"].startswith("Fix: ") and made["Status"] == "Not Started"
    client.force_login(staff)
    download = client.get(reverse("reviews:salesforce_merges_csv", args=[run.pk]))
    assert download.status_code == 200
    rows = list(csv.DictReader(io.StringIO(download.content.decode())))
    assert rows and {r["ObjectType"] for r in rows} <= {"Account", "Contact", "Opportunity"}
    assert all(r["MasterRecordId"] and r["RecordToMergeId1"] for r in rows)
