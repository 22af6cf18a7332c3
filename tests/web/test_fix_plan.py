"""The fix plan of a stored run (docs/output.md) from the run page, the CLI and the
API: real submit path, real Postgres; the CSV read back as a spreadsheet and as HubSpot's
import reads it (a `Record ID` column of HubSpot record ids, one per row)."""

from __future__ import annotations

import csv
import io
import json
import re

import httpx
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from reviews.engine.ingest import UploadedFile
from reviews.engine.specialists.dedup import MERGE_KINDS
from reviews.models import Dataset, Finding
from reviews.orchestration.dataset.dismissals import dismiss
from reviews.reports.fixplan_export import MERGE_COLUMNS, TASK_COLUMNS
from tests.engine.fixplan_helpers import SAMPLES
from tests.uploads import json_upload
from tests.web.api.conftest import bearer
from tests.web.conftest import queued, reviewed

pytestmark = pytest.mark.django_db

PORTAL = "4512345"
HUBSPOT_ID = re.compile(r"^[0-9]+$")


def hubspot_sample() -> list[UploadedFile]:
    return [
        UploadedFile(name, (SAMPLES / "hubspot" / name).read_bytes())
        for name in ("companies.csv", "contacts.csv", "deals.csv")
    ]


def full_sample() -> list[UploadedFile]:
    return [UploadedFile("full.json", (SAMPLES / "full.json").read_bytes())]


@pytest.fixture
def hubspot_run(postgres):
    run = reviewed(hubspot_sample())
    dataset = Dataset.objects.create(name="acme-hubspot", hubspot_portal_id=PORTAL)
    run.batch.dataset = dataset
    run.batch.save(update_fields=["dataset"])
    return run


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def cli(*args: str) -> str:
    out = io.StringIO()
    call_command("fix_plan", *args, stdout=out)
    return out.getvalue()


# --- the run page ------------------------------------------------------------------------


def test_run_page_links_the_merge_plan_and_the_to_do_list(member_client, hubspot_run):
    page = member_client.get(reverse("reviews:run", args=[hubspot_run.pk])).content.decode()
    for name in ("merges_csv", "tasks_csv", "fix_plan_json"):
        assert reverse(f"reviews:{name}", args=[hubspot_run.pk]) in page


def test_merges_csv_has_one_row_per_merge_with_hubspots_record_id(member_client, hubspot_run):
    response = member_client.get(reverse("reviews:merges_csv", args=[hubspot_run.pk]))
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    text = response.content.decode()
    assert text.splitlines()[0].split(",") == list(MERGE_COLUMNS)
    [merge] = rows(text)
    assert merge["Record ID"] == "9001001" and merge["merge"] == "9001002"
    assert merge["object"] == "companies"
    assert merge["reason"] == "9001001 has the most associations (2; 9001002 0)"
    assert "9001002.name = Harbor Analytics, Inc. (kept: Harbor Analytics)" in merge["loses"]


def test_tasks_csv_is_one_row_per_task_in_hubspots_import_shape(member_client, hubspot_run):
    text = member_client.get(reverse("reviews:tasks_csv", args=[hubspot_run.pk])).content.decode()
    header, *lines = text.splitlines()
    assert header.split(",") == list(TASK_COLUMNS)
    tasks = rows(text)
    non_merge = Finding.objects.filter(run=hubspot_run).exclude(kind__in=MERGE_KINDS).count()
    assert len(tasks) == len(lines) == non_merge
    # HubSpot's import matches existing records by a `Record ID` column holding one
    # HubSpot record id (a number) per row: the ids its own export writes.
    assert all(HUBSPOT_ID.match(task["Record ID"]) for task in tasks)
    won = next(t for t in tasks if t["kind"] == "won_without_amount")
    assert (won["Record ID"], won["object"], won["property"]) == ("5001002", "deals", "amount")
    assert won["url"] == f"https://app.hubspot.com/contacts/{PORTAL}/record/0-3/5001002"


def test_fix_plan_json_from_the_page_matches_the_cli(member_client, hubspot_run):
    response = member_client.get(reverse("reviews:fix_plan_json", args=[hubspot_run.pk]))
    assert response.status_code == 200
    assert response.json() == json.loads(cli("--run", str(hubspot_run.pk)))


def test_the_csv_and_the_json_write_an_amount_alike_in_its_currencys_minor_units(
    member_client, postgres
):
    """42000 in both (not 42000.00 in the CSV), ¥60,000 without a minor unit, cents and
    a third digit where the currency has them, as far as a finding keeps them."""
    deals = [("201", 42000, "USD"), ("202", 60000, "JPY"), ("203", 1234.5, "EUR"),
             ("204", "12.345", "BHD")]  # fmt: skip
    batch = {
        "exportedAt": "2026-08-01T09:00:00Z",
        "companies": [{"id": "101", "name": "Acme", "domain": "acme.example"}],
        "contacts": [],
        "deals": [
            {"id": i, "name": i, "amount": a, "currency": c, "stage": "closedwon",
             "companyId": "101"}
            for i, a, c in deals
        ],
    }  # fmt: skip
    run = reviewed([json_upload(batch)])
    tasks = json.loads(cli("--run", str(run.pk), "--kind", "tasks"))["tasks"]
    in_json = {t["record_id"]: (t["amount"], t["currency"]) for t in tasks}
    assert in_json == {"201": (42000, "USD"), "202": (60000, "JPY"), "203": (1234.5, "EUR"),
                       "204": (12.34, "BHD")}  # fmt: skip
    text = member_client.get(reverse("reviews:tasks_csv", args=[run.pk])).content.decode()
    in_csv = {t["Record ID"]: (t["amount"], t["currency"]) for t in rows(text)}
    assert in_csv == {"201": ("42000", "USD"), "202": ("60000", "JPY"),
                      "203": ("1234.5", "EUR"), "204": ("12.34", "BHD")}  # fmt: skip


def test_a_run_still_queued_has_no_plan_yet(member_client, postgres):
    run = queued()
    response = member_client.get(reverse("reviews:fix_plan_json", args=[run.pk]))
    assert response.status_code == 409
    assert "needs a finished review" in response.json()["detail"]


def test_the_downloads_need_a_login(client, hubspot_run):
    url = reverse("reviews:tasks_csv", args=[hubspot_run.pk])
    assert client.get(url).url == f"/accounts/login/?next={url}"


def test_a_hostile_cell_is_escaped_as_in_the_findings_csv(member_client, postgres):
    batch = {
        "exportedAt": "2026-08-01T09:00:00Z",
        "companies": [{"id": "=HYPERLINK(\"http://x\")", "name": "Acme", "domain": "acme.example"}],
        "contacts": [],
        "deals": [{"id": "@dl_1", "name": "=cmd|' /C calc'!A0", "amount": 5000,
                   "stage": "closedwon", "companyId": "=HYPERLINK(\"http://x\")"}],
    }  # fmt: skip
    run = reviewed([json_upload(batch)])
    tasks = rows(member_client.get(reverse("reviews:tasks_csv", args=[run.pk])).content.decode())
    [task] = tasks
    assert task["Record ID"] == "'@dl_1"
    assert not task["problem"].startswith("=")


# --- dismissals --------------------------------------------------------------------------


def test_a_dismissed_duplicate_leaves_the_merge_plan(postgres):
    run = reviewed(full_sample())
    dataset = Dataset.objects.create(name="full")
    run.batch.dataset = dataset
    run.batch.save(update_fields=["dataset"])
    before = json.loads(cli("--run", str(run.pk), "--kind", "merges"))["merges"]
    assert {m["object"] for m in before} == {"companies", "contacts", "deals"}
    deal = next(m for m in before if m["object"] == "deals")
    dismiss(dataset, deal["fingerprint"], reason="two real orders")
    after = json.loads(cli("--run", str(run.pk), "--kind", "merges"))["merges"]
    assert [m["fingerprint"] for m in after] == [m["fingerprint"] for m in before if m is not deal]


# --- the CLI -----------------------------------------------------------------------------


def test_cli_json_has_the_documented_shape(hubspot_run):
    document = json.loads(cli("--run", str(hubspot_run.pk)))
    assert set(document) == {"merges", "tasks"}
    [merge] = document["merges"]
    assert {k: merge[k] for k in ("object", "primary", "merge")} == {
        "object": "companies",
        "primary": "9001001",
        "merge": ["9001002"],
    }
    assert merge["reason"] and len(merge["fingerprint"]) == 16
    task_keys = {"object", "record_id", "owner", "property", "problem", "amount", "currency", "url"}
    assert all(task_keys <= set(task) for task in document["tasks"])
    only_tasks = json.loads(cli("--run", str(hubspot_run.pk), "--kind", "tasks"))
    assert only_tasks == {"tasks": document["tasks"]}


def test_cli_csv_needs_a_kind_and_prints_the_pages_bytes(member_client, hubspot_run):
    out = cli("--run", str(hubspot_run.pk), "--kind", "tasks", "--format", "csv")
    page = member_client.get(reverse("reviews:tasks_csv", args=[hubspot_run.pk]))
    assert out == page.content.decode()
    with pytest.raises(CommandError, match="needs --kind"):
        cli("--run", str(hubspot_run.pk), "--format", "csv")
    with pytest.raises(CommandError, match="no run 999999"):
        cli("--run", "999999")


# --- the API -----------------------------------------------------------------------------


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_api_fix_plan_json_and_csv(live_server, django_user_model, redis_url):
    from reviews.apiauth.tokens import create_token

    run = reviewed(hubspot_sample())
    user = django_user_model.objects.create_user("reader")
    headers = bearer(create_token(user, "reader", ["read"]).secret)
    url = f"{live_server.url}/api/v1/runs/{run.pk}/fix-plan"
    with httpx.Client(headers=headers, timeout=30) as http:
        document = http.get(url).json()
        assert [m["primary"] for m in document["merges"]] == ["9001001"]
        assert document["tasks"] and document["tasks"][0]["url"] is None  # no portal set
        assert http.get(url, params={"kind": "merges"}).json()["tasks"] == []
        answer = http.get(url, params={"kind": "tasks", "format": "csv"})
        assert answer.headers["content-type"] == "text/csv; charset=utf-8"
        assert rows(answer.text)[0]["Record ID"] == document["tasks"][0]["record_id"]
        assert http.get(url, params={"format": "csv"}).status_code == 422
        assert http.get(f"{live_server.url}/api/v1/runs/999999/fix-plan").status_code == 404
        assert httpx.get(url).status_code == 401


def test_a_to_do_list_per_owner(member_client, postgres):
    batch = {
        "exportedAt": "2026-08-01T09:00:00Z",
        "companies": [{"id": "101", "name": "Acme", "domain": "acme.example", "owner": "maya"},
                      {"id": "102", "name": "Beta", "domain": "beta.example"}],
        "contacts": [],
        "deals": [
            {"id": "201", "name": "A", "amount": 9000, "stage": "closedwon", "companyId": "101"},
            {"id": "202", "name": "B", "amount": 5000, "stage": "closedwon", "companyId": "101",
             "hubspot_owner_id": "owen"},
            {"id": "203", "name": "C", "amount": 7000, "stage": "closedwon", "companyId": "102"},
        ],
    }  # fmt: skip
    run = reviewed([json_upload(batch)])
    everyone = json.loads(cli("--run", str(run.pk), "--kind", "tasks"))["tasks"]
    assert [(t["record_id"], t["owner"], t["amount"]) for t in everyone] == [
        ("201", "maya", 9000),  # the deal's company's owner
        ("203", None, 7000),
        ("202", "owen", 5000),  # the deal's own
    ]
    mayas = json.loads(cli("--run", str(run.pk), "--kind", "tasks", "--owner", "maya"))
    assert [t["record_id"] for t in mayas["tasks"]] == ["201"]
    unowned = member_client.get(reverse("reviews:tasks_csv", args=[run.pk]), {"owner": ""})
    assert [t["Record ID"] for t in rows(unowned.content.decode())] == ["203"]


def test_the_portal_id_is_edited_in_the_admin(admin_client, postgres):
    dataset = Dataset.objects.create(name="acme")
    url = reverse("admin:reviews_dataset_change", args=[dataset.pk])
    assert 'name="hubspot_portal_id"' in admin_client.get(url).content.decode()
    form = {"name": "acme", "verdict_scope": "new", "hubspot_portal_id": "not-a-number"}
    assert "is a number" in admin_client.post(url, form).content.decode()
    admin_client.post(url, {**form, "hubspot_portal_id": "4512345"})
    dataset.refresh_from_db()
    assert dataset.hubspot_portal_id == "4512345"


def test_the_salesforce_org_address_is_edited_in_the_admin_host_alone(admin_client, postgres):
    dataset = Dataset.objects.create(name="acme-sf")
    url = reverse("admin:reviews_dataset_change", args=[dataset.pk])
    form = {"name": "acme-sf", "verdict_scope": "new"}
    for refused in ("http://acme.my.salesforce.com", "https://acme.my.salesforce.com/x?y=1"):
        page = admin_client.post(url, {**form, "salesforce_url": refused}).content.decode()
        assert "https address" in page or "no path" in page
    admin_client.post(url, {**form, "salesforce_url": "https://acme.my.salesforce.com"})
    dataset.refresh_from_db()
    assert dataset.salesforce_url == "https://acme.my.salesforce.com"


def test_the_documented_csv_columns_are_the_written_ones():
    text = (SAMPLES.parent / "docs" / "output.md").read_text()
    merges = re.search(r"- `merges.csv`: (.+?)\.\n", text, re.S).group(1)
    tasks = re.search(r"- `tasks.csv`: (.+?)\.\n", text, re.S).group(1)
    assert re.findall(r"`([^`]+)`", merges) == list(MERGE_COLUMNS)
    assert re.findall(r"`([^`]+)`", tasks) == list(TASK_COLUMNS)
