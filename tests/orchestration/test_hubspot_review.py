"""A HubSpot export reviewed end to end (issue 10, issue 15 items 7 and 10): the same
export uploaded again is the same review, and the run says what it read and how."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from reviews.management.commands.load_samples import sample_uploads
from reviews.models import Batch, ReviewRun
from reviews.orchestration.intake.submit import submit
from tests.engine.ingest.hubspot_exports import csv_files
from tests.orchestration.test_cli import review_json

pytestmark = pytest.mark.django_db


def write(tmp_path, files) -> list:
    paths = []
    for name, data in files:
        path = tmp_path / name
        path.write_bytes(data)
        paths.append(path)
    return paths


def test_csv_export_reviewed_twice_without_as_of_is_served_from_the_cache(postgres, tmp_path):
    paths = write(tmp_path, csv_files(style="excel_us"))

    code, first = review_json(*paths)
    _, second = review_json(*paths)

    assert code == 1  # request_changes: the planted duplicate deal and won-without-amount
    assert (first["run"]["mode"], second["run"]["mode"]) == ("fresh", "cached")
    assert first["run"]["as_of"] == "2026-07-30T10:11:00Z"
    assert first["run"]["as_of_source"] == "last_modified"
    assert first["run"]["partial"] is False
    assert first["run"]["missing_lists"] == first["run"]["missing_columns"] == []
    assert first["batch"]["ignored_columns"] == {
        "companies.csv": ["Industry"],  # Deal owner is read: Deal.owner
    }
    twice = next(f for f in first["findings"] if f["kind"] == "deal_entered_twice")
    assert (twice["amount_at_risk"], twice["currency"]) == (410000.5, "USD")
    assert not any(f["kind"] == "invalid_value" for f in first["findings"])


def test_partial_export_says_so_in_the_json(postgres, tmp_path):
    paths = write(tmp_path, [f for f in csv_files() if f[0] == "contacts.csv"])

    code, report = review_json(*paths)

    assert report["run"]["partial"] is True
    assert report["run"]["missing_lists"] == ["companies", "deals"]
    assert not any(f["category"] == "attribution" for f in report["findings"])
    assert code == 0


def test_load_samples_queues_the_csv_sample_with_its_export_date(
    postgres, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_samples", stdout=io.StringIO())
    csv_upload = next(files for files in sample_uploads() if files[0].name.endswith(".csv"))
    batch = Batch.objects.get(file_name__contains="companies.csv", dataset=None)

    again = submit(csv_upload)

    assert batch.as_of_source == "last_modified"
    assert again.run.mode == ReviewRun.Mode.CACHED


def test_load_samples_loads_a_datasets_syncs_in_order_with_owners_and_an_xlsx(
    django_capture_on_commit_callbacks,
):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_samples", stdout=io.StringIO())
    first, second = ReviewRun.objects.filter(batch__dataset__name="northwind").order_by("pk")
    assert "deals.xlsx" in second.batch.file_name and second.batch.as_of > first.batch.as_of
    assert "1 new problem; 5 still open; 1 resolved since the last sync." in second.verdict.summary
    findings = list(second.findings.all())
    owners = {owner for f in findings for owner in f.owners}
    assert owners >= {"Maya Singh", "Owen Price", "Ana Ruiz"}
    assert {source for f in findings for source in f.record_sources} >= {"Import", "CRM UI"}
