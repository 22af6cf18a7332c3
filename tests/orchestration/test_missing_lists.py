"""A check over a list the batch does not have did not run, and the run says so
(docs/rules.md#partial-exports): the lead rules of a Salesforce export without Lead.csv
and of every HubSpot batch. The verdict is what the same export with an empty Lead.csv
gets (the rules ran on it and found nothing), never greener."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.urls import reverse

from alerts.payloads import message
from reviews.apiauth.tokens import create_token
from reviews.engine.ingest import UploadedFile
from reviews.models import ReviewRun
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from reviews.reports.report import run_report, text_report
from reviews.samplegen import salesforce_org as org
from tests.engine.partial_exports import AS_OF, export

pytestmark = pytest.mark.django_db

LEAD_KINDS = ["lead_already_contact", "lead_inactive_owner", "lead_no_owner", "lead_same_email"]


def reviewed(files: dict[str, bytes]) -> ReviewRun:
    uploads = [UploadedFile(name, data) for name, data in files.items()]
    submission = submit(uploads, as_of=org.AS_OF, dispatch=False, no_cache=True)
    assert submission.accepted, submission.errors
    start_review.apply(kwargs={"run_id": submission.run.pk})
    submission.run.refresh_from_db()
    return submission.run


def header_only(data: bytes) -> bytes:
    """The file's header row alone: the list exported, with no record in it."""
    return next(iter(io.StringIO(data.decode("utf-8"), newline=""))).encode("utf-8")


def test_a_salesforce_export_without_lead_csv_says_its_lead_rules_did_not_run(
    client, django_user_model
):
    files = org.data_export()
    without = reviewed({n: d for n, d in files.items() if n != "Lead.csv"})
    empty = reviewed(files | {"Lead.csv": header_only(files["Lead.csv"])})

    report, ran = run_report(without), run_report(empty)
    assert report["run"]["missing_lists"] == ["leads"] and report["run"]["partial"] is True
    assert [(e["kind"], e["why"]) for e in report["run"]["not_run"]] == [
        (kind, "the export has no leads") for kind in LEAD_KINDS
    ]
    assert ran["run"]["not_run"] == [] and ran["run"]["missing_lists"] == []
    assert report["verdict"] == ran["verdict"]  # not greener than when they ran
    assert "partial: checks not run: lead_already_contact, " in text_report(report)
    payload = message(without, [])
    assert [e["kind"] for e in payload["run"]["not_run"]] == LEAD_KINDS
    user = django_user_model.objects.create_user("robot", password="robot-pass-123")
    auth = {"Authorization": f"Bearer {create_token(user, 'ci').secret}"}
    one = client.get(reverse("api:run", kwargs={"run_id": without.pk}), headers=auth).json()
    assert [e["kind"] for e in one["run"]["not_run"]] == LEAD_KINDS


def test_a_hubspot_run_never_ran_the_lead_rules_and_is_not_partial_for_it():
    uploads = [UploadedFile(name, data) for name, data in export(won=True)]
    submission = submit(uploads, as_of=AS_OF, dispatch=False, no_cache=True)
    start_review.apply(kwargs={"run_id": submission.run.pk})
    report = run_report(submission.run)

    assert report["run"]["partial"] is False and report["run"]["missing_lists"] == []
    assert [(e["kind"], e["why"]) for e in report["run"]["not_run"]] == [
        (kind, "only Salesforce has leads") for kind in LEAD_KINDS
    ]
    assert "checks not run" not in text_report(report)


def test_a_sync_without_lead_csv_resolves_none_of_the_last_syncs_lead_problems():
    files = org.data_export()
    uploads = [UploadedFile(name, data) for name, data in files.items()]
    first = submit(uploads, as_of=org.AS_OF, dataset="acme-sf", dispatch=False, no_cache=True)
    start_review.apply(kwargs={"run_id": first.run.pk})
    leads_found = {f["kind"] for f in run_report(first.run)["findings"]} & set(LEAD_KINDS)
    assert leads_found, "the org plants lead problems"

    later = [UploadedFile(n, d) for n, d in files.items() if n != "Lead.csv"]
    as_of = org.AS_OF + timedelta(days=1)
    second = submit(later, as_of=as_of, dataset="acme-sf", dispatch=False, no_cache=True)
    start_review.apply(kwargs={"run_id": second.run.pk})
    second.run.refresh_from_db()
    report = run_report(second.run)
    assert report["run"]["baseline_run"] == first.run.pk
    # Not looked for, so not fixed: they stay open on the dataset.
    assert not {r["kind"] for r in report["run"]["resolved"]} & leads_found
