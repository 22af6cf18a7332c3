"""The run and batch pages of a HubSpot export: money in its own currency, where the
as-of time came from, and what the export did not carry (issue 10, issue 15 item 7)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from reviews.engine.ingest import UploadedFile
from reviews.orchestration.intake.submit import submit

pytestmark = pytest.mark.django_db


def test_run_and_batch_pages_show_money_in_its_currency_and_what_was_not_read(
    postgres, member_client, django_capture_on_commit_callbacks
):
    deals = (
        b"Record ID,Deal Name,Deal Stage,Amount,Currency,Close Date,Associated Company IDs,"
        b"Deal Type\n"
        b"1,Kran,Contract Sent,-5000,EUR,2026-09-30,9,newbusiness\n"
    )
    companies = b"Record ID,Company name,Last Modified Date\n9,Kranwerk,2026-07-01 10:00\n"
    with django_capture_on_commit_callbacks(execute=True):
        submission = submit(
            [UploadedFile("deals.csv", deals), UploadedFile("companies.csv", companies)]
        )
    assert submission.accepted, submission.errors
    run = submission.run

    page = member_client.get(reverse("reviews:run", args=[run.pk])).content.decode()
    batch_page = member_client.get(reverse("reviews:batch", args=[run.batch_id])).content.decode()
    response = member_client.get(reverse("reviews:run_json", args=[run.pk]))
    report = json.loads(b"".join(response.streaming_content))

    assert "-€5,000" in page and "$-5" not in page and "€-5" not in page
    assert "the newest Last Modified Date in the export" in page
    assert "Partial export: no contacts" in page
    assert "Deal Type" in batch_page  # a column no rule reads
    assert report["run"]["as_of_source"] == "last_modified"
