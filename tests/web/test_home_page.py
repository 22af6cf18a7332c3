"""The home page (`/`, docs/history.md#the-home-page): one row per dataset of the user's
workspaces, least healthy first, with its health score (reviews.engine.health, kept on
each run), a trend with one hovered point per sync, open criticals, the money at risk in
its own currency (the sync's standing: reviews.engine.at_risk), the last sync and the next
scheduled pull; the one-off uploads beside them. Django's test client; tasks run eagerly."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext

from connectors import tokens
from connectors.models import Connection, Pull
from reviews.engine.health import health_score
from reviews.engine.ingest import UploadedFile
from reviews.models import Dataset, ReviewRun, findings_of
from reviews.orchestration.dataset.dismissals import dismiss
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from reviews.web.home import spark
from tests.orchestration.test_dataset_history import reviewed, small_sync
from tests.uploads import upload

pytestmark = pytest.mark.django_db
SALESFORCE = Path(__file__).resolve().parents[2] / "samples" / "salesforce"


def clean_sync(as_of: str, dataset: str) -> dict:
    return {
        "exportedAt": as_of,
        "dataset": dataset,
        "companies": [{"id": "co_9", "name": "Globex", "domain": "globex.example"}],
        "contacts": [],
        "deals": [],
    }


def euro_sync(as_of: str) -> dict:
    batch = small_sync(as_of, 7_500, dataset="euro-crm")
    batch["deals"][0]["currency"] = "EUR"
    return batch


def rows_of(page: str) -> list[str]:
    return re.findall(r'<tr class="dataset-row" data-dataset="([^"]+)">', page)


def row_html(page: str, name: str) -> str:
    start = page.index(f'data-dataset="{name}"')
    return page[start : page.index("</tr>", start)]


def test_each_run_keeps_its_health_from_the_one_definition(member):
    run = reviewed(small_sync("2026-08-01T09:00:00Z", 1000), created_by=member)
    records = run.batch.companies + run.batch.contacts + run.batch.deals
    assert records == 3
    # A run's Finding rows are its open problems (new or still open); what the team
    # dismissed is kept apart, on the run's `suppressed`.
    assert run.health == health_score(records, findings_of(run))
    assert Decimal(0) < run.health < Decimal(100)  # a critical deal and a warning pair
    assert reviewed(clean_sync("2026-08-01T09:00:00Z", "clean"), created_by=member).health == 100


def test_a_dismissed_problem_no_longer_weighs(member):
    first = reviewed(small_sync("2026-08-01T09:00:00Z", 1000), created_by=member)
    critical = first.findings.get(severity="critical")
    dismiss(first.batch.dataset, critical.fingerprint, reason="closed in the old CRM", user=None)
    second = reviewed(small_sync("2026-08-02T09:00:00Z", 1000), created_by=member)
    assert [s["severity"] for s in second.suppressed] == ["critical"]
    # 3 records: the warning pair alone weighs, as if the critical were fixed.
    assert (first.health, second.health) == (Decimal("50.0"), Decimal("83.3"))


def test_the_home_page_lists_datasets_least_healthy_first_with_score_money_and_trend(
    member_client, member
):
    first = reviewed(small_sync("2026-08-01T09:00:00Z", 1000), created_by=member)
    fixed = small_sync("2026-08-02T09:00:00Z", 1200)
    fixed["deals"][0]["closeDate"] = "2026-07-30"  # the critical is fixed
    second = reviewed(fixed, created_by=member)
    clean = reviewed(clean_sync("2026-08-03T09:00:00Z", "globex-crm"), created_by=member)
    euro = reviewed(euro_sync("2026-08-01T09:00:00Z"), created_by=member)
    one_off = reviewed(small_sync("2026-08-01T09:00:00Z", 4242, dataset=None), created_by=member)
    # 3 records: a critical deal (1) and a warning pair (2 x 1/4), then the pair alone.
    assert (first.health, second.health, clean.health) == (
        Decimal("50.0"),
        Decimal("83.3"),
        Decimal("100.0"),
    )
    assert euro.health == first.health  # the same problems, in euros

    page = member_client.get("/").content.decode()

    # Least healthy first; a tie (acme's fixed sync is healthier) by open criticals, name.
    assert rows_of(page) == ["euro-crm", "acme-hubspot", "globex-crm"]
    euro_row = row_html(page, "euro-crm")
    assert f">{euro.health}</strong>" in euro_row
    assert '<span class="badge sev-critical">1</span>' in euro_row
    assert "€7,500" in euro_row and "$" not in euro_row  # its own currency, never dollars
    assert euro.standing["amounts"] == {"EUR": "7500"}  # the figure shown is the run's own
    acme = row_html(page, "acme-hubspot")
    assert f">{second.health}</strong>" in acme and "2 syncs" in acme
    assert "$0" in acme and 'class="badge sev-critical"' not in acme  # the critical is fixed
    # The trend: one point per sync, oldest first, each with its hover value.
    titles = re.findall(r"<title>(sync #\d+[^<]*)</title>", acme)
    assert titles == [
        f"sync #1 · 2026-08-01 09:00: health {first.health}",
        f"sync #2 · 2026-08-02 09:00: health {second.health}",
    ]
    assert acme.count("<circle") == 2 and "<polyline" in acme
    assert f'href="/datasets/acme-hubspot/?workspace={first.batch.workspace_id}"' in acme
    # The dataset page it links to gives each sync's score too, newest first.
    dataset_page = member_client.get("/datasets/acme-hubspot/").content.decode()
    assert re.findall(r"<td class=\"num\" data-health>([^<]+)</td>", dataset_page) == [
        str(second.health),
        str(first.health),
    ]
    globex = row_html(page, "globex-crm")
    assert ">100.0</strong>" in globex and "uploads only" in globex
    # The one-off upload is listed beside them, not as a dataset.
    one_offs = page[page.index('id="one-offs"') :]
    assert f'href="/runs/{one_off.pk}/"' in one_offs and "$4,242" in one_offs
    assert f'href="/runs/{one_off.pk}/"' not in page[: page.index('id="one-offs"')]
    # The navigation's Datasets entry is this page, marked as the current one.
    assert '<a href="/" class="active">Datasets</a>' in page


def test_a_connected_dataset_shows_its_next_pull_and_its_state(member_client, member):
    run = reviewed(small_sync("2026-08-01T09:00:00Z", 1000), created_by=member)
    connection = Connection.objects.create(
        dataset=run.batch.dataset,
        token_sealed=tokens.encrypt("pat-home"),
        portal_id="881",
        next_pull_at=datetime(2026, 8, 2, 6, 0, tzinfo=UTC),
    )
    acme = row_html(member_client.get("/").content.decode(), "acme-hubspot")
    assert "2026-08-02 06:00 UTC" in acme and ">scheduled</span>" in acme
    Pull.objects.create(connection=connection, kind=Pull.Kind.FULL, status=Pull.Status.FAILED)
    acme = row_html(member_client.get("/").content.decode(), "acme-hubspot")
    assert ">last pull failed</span>" in acme
    Connection.objects.filter(pk=connection.pk).update(active=False)
    acme = row_html(member_client.get("/").content.decode(), "acme-hubspot")
    assert ">paused</span>" in acme and "2026-08-02 06:00" not in acme


def test_no_datasets_yet_points_to_the_upload_page(member_client):
    page = member_client.get("/").content.decode()
    assert rows_of(page) == [] and "No datasets yet" in page and 'href="/upload/"' in page


def test_an_upload_posted_to_the_old_address_is_still_received(member_client):
    data = upload("seed-example.json").data
    response = member_client.post("/", {"files": SimpleUploadedFile("seed.json", data)})
    assert response.status_code == 302 and re.match(r"^/runs/\d+/$", response["Location"])
    assert ReviewRun.objects.count() == 1
    assert member_client.get("/upload/").status_code == 200


def test_the_trend_is_drawn_from_its_lowest_tens_to_100():
    at = datetime(2026, 8, 1, tzinfo=UTC)
    line = spark([(1, at, Decimal("100.0")), (2, at, Decimal("0.0")), (3, at, Decimal("50.0"))])
    assert line.floor == 0
    assert [(p.x, p.y) for p in line.points] == [(5, 5), (80, 35), (155, 20)]
    # 99.5 then 89.0: drawn from 80, so the fall fills most of the height.
    fall = spark([(1, at, Decimal("99.5")), (2, at, Decimal("89.0"))])
    assert fall.floor == 80 and [p.y for p in fall.points] == [5.75, 21.5]
    alone = spark([(4, at, Decimal("100.0"))])
    assert alone.floor == 90 and (alone.points[0].x, alone.points[0].y) == (155, 5)
    assert spark([]) is None


def connect(name: str) -> None:
    Connection.objects.create(
        dataset=Dataset.objects.get(name=name),
        token_sealed=tokens.encrypt(f"pat-{name}"),
        portal_id=name,
    )


def test_the_page_asks_the_same_queries_however_many_datasets_and_syncs(member_client, member):
    reviewed(small_sync("2026-08-01T09:00:00Z", 1000, dataset="one"), created_by=member)
    connect("one")
    reviewed(small_sync("2026-08-01T09:00:00Z", 1000, dataset=None), created_by=member)
    member_client.get("/")
    with CaptureQueriesContext(connection) as few:
        assert member_client.get("/").status_code == 200
    for day in (2, 3):
        reviewed(small_sync(f"2026-08-0{day}T09:00:00Z", 1000, dataset="one"), created_by=member)
    for name in ("two", "three"):
        reviewed(small_sync("2026-08-01T09:00:00Z", 1000, dataset=name), created_by=member)
        connect(name)
    reviewed(small_sync("2026-08-02T09:00:00Z", 1000, dataset=None), created_by=member)
    with CaptureQueriesContext(connection) as many:
        page = member_client.get("/").content.decode()
    assert len(rows_of(page)) == 3 and page.count("<circle") == 5
    assert len(many) == len(few), [q["sql"][:120] for q in many]


def test_one_team_two_crms_side_by_side(member_client, member):
    # The same business as a HubSpot sync and as its Salesforce org's weekly export.
    reviewed(small_sync("2026-08-01T09:00:00Z", 1000, dataset="acme-hubspot"), created_by=member)
    salesforce = [UploadedFile(p.name, p.read_bytes()) for p in sorted(SALESFORCE.glob("*.csv"))]
    submission = submit(salesforce, dispatch=False, dataset="acme-salesforce", created_by=member)
    assert submission.accepted, submission.errors
    start_review.apply(kwargs={"run_id": submission.run.pk})
    page = member_client.get("/").content.decode()
    assert sorted(rows_of(page)) == ["acme-hubspot", "acme-salesforce"]
    assert '<span class="crm">HubSpot</span>' in row_html(page, "acme-hubspot")
    sf = row_html(page, "acme-salesforce")
    assert '<span class="crm">Salesforce</span>' in sf and 'class="badge sev-critical"' in sf
