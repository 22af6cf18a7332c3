"""A dataset learns its portal's deal pipelines (issue 21): from a pipelines response
uploaded beside a sync, apart through the CLI, or edited in admin; every later sync,
CSV or JSON, reads stages by them, and the run says where its stage knowledge came from."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from reviews.engine.ingest import UploadedFile
from reviews.models import Batch, Dataset, Finding
from reviews.orchestration.intake.serve import rerun
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from reviews.orchestration.store.parsed import forget_parsed, parse_stored
from tests.engine.ingest import renewals_portal as portal

pytestmark = pytest.mark.django_db


def sync(files, dataset: str = "acme-renewals"):
    uploads = [UploadedFile(name, data) for name, data in files]
    submission = submit(uploads, as_of=portal.AS_OF, dataset=dataset, dispatch=False, no_cache=True)
    assert submission.accepted, submission.errors
    start_review.apply(kwargs={"run_id": submission.run.pk})
    submission.run.refresh_from_db()
    return submission.run


def found(run) -> set[tuple]:
    return {
        (f.kind, tuple(f.record_ids), f.severity)
        for f in Finding.objects.filter(run=run.reused_run or run)
    }


def test_pipelines_uploaded_beside_a_sync_are_kept_for_the_next_sync(postgres):
    first = sync([*portal.csv_files(state_columns=False), portal.pipelines_file()])
    dataset = Dataset.objects.get(name="acme-renewals")

    assert {p["id"] for p in dataset.pipelines} == {"default", portal.RENEWALS_ID}
    assert dataset.pipelines_from == "upload"
    assert first.batch.stage_source == "export"
    assert portal.PLANTED <= found(first)
    assert not any(kind == "unknown_stage" for kind, _, _ in found(first))

    later = sync(portal.csv_files(state_columns=False))  # no pipelines file this time

    assert later.batch.stage_source == "dataset"
    assert later.batch.stage_sources == {"dataset": 6}
    assert found(later) == found(first)
    assert first.verdict.decision == "request_changes"
    # Nothing new since the first sync: the same problems, still open (verdict scope new).
    assert set(Finding.objects.filter(run=later).values_list("status", flat=True)) == {"open"}
    forget_parsed()  # a worker reading the stored batch again agrees
    assert parse_stored(later.batch).stage_sources() == {"dataset": 6}


def test_crm_api_json_sync_reads_stage_ids_by_the_dataset_pipelines(postgres):
    sync([*portal.csv_files(state_columns=False), portal.pipelines_file()])

    run = sync(portal.api_files())

    assert run.batch.stage_source == "dataset"
    assert portal.PLANTED <= found(run)
    assert not any(kind == "unknown_stage" for kind, _, _ in found(run))


def test_cli_stores_pipelines_apart_and_a_rerun_reads_the_batch_with_them(postgres, tmp_path):
    before = sync(portal.csv_files(state_columns=False))
    unknown = {ids for kind, ids, _ in found(before) if kind == "unknown_stage"}
    assert unknown == {("40001",), ("40002",), ("40003",), ("40006",)}
    assert before.batch.stage_sources == {"default": 2, "unknown": 4}
    path = tmp_path / "pipelines.json"
    path.write_text(json.dumps(portal.pipelines_response()))
    out = io.StringIO()

    call_command("pipelines", str(path), "--dataset", "acme-renewals", stdout=out)

    assert out.getvalue().strip() == "acme-renewals: 2 pipelines, 7 stages"
    again = rerun(before)
    start_review.apply(kwargs={"run_id": again.pk})
    again.refresh_from_db()
    batch = Batch.objects.get(pk=before.batch_id)
    assert batch.stage_source == "dataset"
    assert not any(kind == "unknown_stage" for kind, _, _ in found(again))
    assert portal.PLANTED <= found(again)


def test_cli_prints_the_stored_pipelines(postgres):
    sync([*portal.csv_files(), portal.pipelines_file()])
    out = io.StringIO()

    call_command("pipelines", "--dataset", "acme-renewals", stdout=out)

    stored = {p["id"]: p for p in json.loads(out.getvalue())}
    won = next(s for s in stored[portal.RENEWALS_ID]["stages"] if s["id"] == "1234568")
    assert won == {"id": "1234568", "label": "Renewal Won", "closed": True, "won": True,
                   "probability": 1.0}  # fmt: skip


def test_a_bad_pipelines_file_is_refused_naming_the_stage(postgres, tmp_path):
    path = tmp_path / "pipelines.json"
    path.write_text(json.dumps({"results": [{"id": "1", "stages": [{"label": "x"}]}]}))

    with pytest.raises(CommandError, match=r"results\[0\]\.stages\[0\]\.id: missing") as caught:
        call_command("pipelines", str(path), "--dataset", "acme-renewals")
    assert caught.value.returncode == 2
    assert not Dataset.objects.filter(name="acme-renewals").exists()


def test_owners_are_kept_on_the_findings_and_their_csv(postgres, client, django_user_model):
    run = sync(portal.csv_files())
    won = Finding.objects.get(run=run, kind="won_without_close_date")

    assert won.owners == ["Avery Chen"]
    assert won.record_sources == ["CRM UI"]
    client.force_login(django_user_model.objects.create_user("ana", password="x-123456789"))
    lines = b"".join(client.get(f"/runs/{run.pk}/findings.csv").streaming_content).decode()
    header, *rows = lines.splitlines()
    assert header.endswith(",owners,record_sources")
    assert any(row.endswith(",Avery Chen,CRM UI") and "40001" in row for row in rows)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="stage-source"' in page
    assert "state columns (Is Closed Won, Is Deal Closed?, Deal probability)" in page
    assert "Avery Chen" in page


def test_cli_reviews_xlsx_exports_with_pipelines_and_names_the_stage_source(postgres, tmp_path):
    from tests.orchestration.test_cli import review_json

    paths = []
    for name, data in [*portal.xlsx_files(state_columns=False), portal.pipelines_file()]:
        path = tmp_path / name
        path.write_bytes(data)
        paths.append(path)

    code, report = review_json(*paths, "--as-of", "2026-08-01T09:00:00Z", "--dataset", "acme")

    assert code == 1  # request_changes: the won renewal without a close date
    assert report["batch"]["stage_source"] == "export"
    assert report["batch"]["stage_sources"] == {"export": 6}
    got = {(f["kind"], tuple(f["record_ids"]), f["severity"]) for f in report["findings"]}
    assert portal.PLANTED <= got
    assert not {f["kind"] for f in report["findings"]} & {
        "unknown_stage", "invalid_value", "dangling_reference",
    }  # fmt: skip
    assert Dataset.objects.get(name="acme").pipelines_from == "upload"
