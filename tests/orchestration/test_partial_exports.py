"""A partial export through the real paths (issue 37): `manage.py review`'s exit code and
JSON, the API, the webhook's payload, the run page, and a dataset's next sync. The export
is HubSpot's CSV with a won deal without an amount, whole and without "Deal Stage"."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from alerts.payloads import message, slack_text
from reviews.apiauth.tokens import create_token
from reviews.engine.ingest import UploadedFile
from reviews.models import Batch, Dataset, ReviewRun
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from tests.engine.partial_exports import AS_OF, export

pytestmark = pytest.mark.django_db

STAGE = (("deals.csv", "Deal Stage"),)


def write(tmp_path: Path, files: list[tuple[str, bytes]]) -> list[Path]:
    for name, data in files:
        (tmp_path / name).write_bytes(data)
    return [tmp_path / name for name, _ in files]


def review(*paths: Path, format: str = "json") -> tuple[int, str]:
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command(
            "review", *map(str, paths), "--format", format, "--as-of", AS_OF.isoformat(),
            stdout=out, stderr=io.StringIO(),
        )  # fmt: skip
    return exit_.value.code, out.getvalue()


def reviewed(files: list[tuple[str, bytes]], dataset: str | None = None) -> ReviewRun:
    uploads = [UploadedFile(name, data) for name, data in files]
    submission = submit(uploads, as_of=AS_OF, dataset=dataset, dispatch=False, no_cache=True)
    assert submission.accepted, submission.errors
    start_review.apply(kwargs={"run_id": submission.run.pk})
    submission.run.refresh_from_db()
    return submission.run


def test_the_cli_exits_1_for_the_export_without_deal_stage_as_for_the_whole_one(tmp_path):
    whole = tmp_path / "whole"
    partial = tmp_path / "partial"
    whole.mkdir(), partial.mkdir()

    code_whole, out_whole = review(*write(whole, export(won=True)))
    code_partial, out_partial = review(*write(partial, export(won=True, drop=STAGE)))

    report = json.loads(out_partial)
    assert (code_whole, json.loads(out_whole)["verdict"]) == (1, "request_changes")
    assert (code_partial, report["verdict"]) == (1, "request_changes")  # was 0
    run = report["run"]
    assert run["partial"] is True and run["missing_lists"] == []
    assert [(m["list"], m["columns"]) for m in run["missing_columns"]] == [
        ("deals", ["Deal Stage"])
    ]
    assert {"won_without_amount", "missing_stage"} <= set(run["switched_off"])
    assert not {f["kind"] for f in report["findings"]} & set(run["switched_off"])
    assert json.loads(out_whole)["run"]["partial"] is False


def test_the_text_report_says_partial(tmp_path):
    code, text = review(*write(tmp_path, export(won=True, drop=STAGE)), format="text")

    assert code == 1
    assert "PARTIAL" in text.splitlines()[0]
    assert 'partial: no column for "Deal Stage" (deals); switched off: ' in text


def test_the_api_carries_it(client, django_user_model):
    run = reviewed(export(won=True, drop=STAGE))
    user = django_user_model.objects.create_user("robot", password="robot-pass-123")
    auth = {"Authorization": f"Bearer {create_token(user, 'ci').secret}"}

    one = client.get(reverse("api:run", kwargs={"run_id": run.pk}), headers=auth).json()
    listed = client.get(reverse("api:runs"), headers=auth).json()

    assert one["verdict"] == "request_changes"
    assert one["run"]["partial"] is True
    assert one["run"]["missing_columns"][0]["properties"] == ["dealstage"]
    assert "won_without_amount" in one["run"]["switched_off"]
    assert [item["partial"] for item in listed["items"]] == [True]


def test_the_webhook_payload_carries_it():
    run = reviewed(export(won=True, drop=STAGE))

    payload = message(run, ["request_changes"])

    assert payload["run"]["partial"] is True
    assert payload["run"]["missing_columns"][0]["columns"] == ["Deal Stage"]
    assert "won_without_amount" in payload["run"]["switched_off"]
    assert "Changes requested (partial export)" in slack_text(payload)
    whole = message(reviewed(export(won=True)), ["request_changes"])
    assert (whole["run"]["partial"], whole["run"]["switched_off"]) == (False, [])


def test_the_run_page_says_it_in_words(client, django_user_model):
    run = reviewed(export(won=True, drop=STAGE))
    client.force_login(django_user_model.objects.create_user("ana", password="ana-pass-123"))

    page = client.get(reverse("reviews:run", kwargs={"run_id": run.pk})).content.decode()

    assert 'id="run-missing-columns"' in page
    assert "The export has no column for &quot;Deal Stage&quot; (deals)" in page
    assert "<li>deals: won without an amount</li>" in page
    assert "partial export</span>" in page  # the verdict's badge
    batch = client.get(reverse("reviews:batch", kwargs={"batch_id": run.batch_id}))
    assert 'id="batch-missing-columns"' in batch.content.decode()


def test_a_partial_sync_resolves_nothing_it_did_not_check_and_is_no_baseline():
    first = reviewed(export(won=True), dataset="acme")
    partial = reviewed(export(won=True, drop=STAGE), dataset="acme")
    third = reviewed(export(won=True), dataset="acme")

    assert first.findings.filter(kind="won_without_amount").exists()
    assert partial.baseline_run_id == first.pk
    assert not [r for r in partial.resolved if r["kind"] == "won_without_amount"]
    assert third.baseline_run_id == first.pk  # not the partial sync
    assert Batch.objects.get(pk=partial.batch_id).missing_columns
    assert Dataset.objects.get(name="acme").batches.count() == 3
