"""Pulling a portal through the real store and review path, against the loopback
stand-in: a pull and a change and a pull give what uploading the two equivalent JSON
batches gives; an interrupted pull resumes; a token revoked mid-pull fails cleanly."""

from __future__ import annotations

import json
import time

import pytest

from connectors import pulls, tokens
from connectors.models import Connection, Pull, PullChunk
from reviews.models import Batch, Dataset
from reviews.orchestration.dataset.pipelines import store_pipelines_response
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from reviews.reports.report import run_report
from tests.connectors.portals import change, document_upload, problem_portal
from tests.connectors.standin import serving

pytestmark = pytest.mark.django_db
TOKEN = "pat-na1-good"


@pytest.fixture
def hubspot(settings):
    """A problem portal served on loopback, with the settings pointed at it."""
    portal = problem_portal(size=30)
    portal.interval_ms = 1000
    with serving(portal, settings) as api:
        settings.HUBSPOT_SEARCH_PER_SECOND = 50
        portal.search_per_second = 50
        yield api


def connected(name: str = "acme-hubspot") -> Connection:
    dataset, _ = Dataset.objects.get_or_create(name=name)
    return pulls.connect(dataset, TOKEN)


def pull_and_review(connection: Connection, *, full: bool = False):
    pull = pulls.request_pull(connection, full=full, by="test")
    pull, submission = pulls.execute_pull(pull.pk, dispatch=False)
    assert pull.status == Pull.Status.DONE, pull.error
    start_review.apply(kwargs={"run_id": submission.run.pk})
    submission.run.refresh_from_db()
    return pull, submission.run


def upload_and_review(upload, *, dataset: str, as_of):
    submission = submit([upload], dispatch=False, no_cache=True, dataset=dataset, as_of=as_of)
    assert submission.accepted, submission.errors
    start_review.apply(kwargs={"run_id": submission.run.pk})
    submission.run.refresh_from_db()
    return submission.run


def comparable(run) -> tuple[list, list, str]:
    report = run_report(run)
    findings = sorted(
        (f["kind"], tuple(f["record_ids"]), f["status"], f["severity"]) for f in report["findings"]
    )
    resolved = sorted((r["kind"], tuple(r["record_ids"])) for r in report["run"]["resolved"])
    return findings, resolved, report["verdict"]


def test_connect_keeps_the_account_details_and_the_token_encrypted(postgres, hubspot):
    connection = connected()
    assert connection.portal_id == "4242"
    assert (connection.company_currency, connection.time_zone) == ("EUR", "Europe/Berlin")
    assert connection.account["dataHostingLocation"] == "eu1"
    assert TOKEN.encode() not in bytes(connection.token_sealed)
    assert tokens.decrypt(connection.token_sealed) == TOKEN
    connection.dataset.refresh_from_db()
    assert connection.dataset.hubspot_portal_id == "4242"  # where fix-plan merges may go


def test_connect_refused_names_hubspots_message(postgres, hubspot):
    dataset = Dataset.objects.create(name="acme")
    with pytest.raises(pulls.ConnectRefused, match="Authentication credentials not found"):
        pulls.connect(dataset, "pat-na1-revoked")
    assert not Connection.objects.exists()


def test_pull_change_pull_gives_what_uploading_the_two_batches_gives(postgres, hubspot):
    portal = hubspot.portal
    connection = connected()
    first_doc = document_upload(portal)
    pull1, run1 = pull_and_review(connection)
    assert pull1.kind == Pull.Kind.FULL and pull1.records == 3 + 3 + 4 + 30 + 30 + 15
    change(portal)
    second_doc = document_upload(portal)
    connection.refresh_from_db()
    pull2, run2 = pull_and_review(connection)
    assert pull2.kind == Pull.Kind.INCREMENTAL
    assert pull2.removed == 2  # company 2 merged away, deal 23 archived
    assert pull2.requests < pull1.requests + 10

    # The twin is the same CRM uploaded by hand: its syncs, and its pipelines response.
    pipelines = json.dumps({"results": portal.pipelines}).encode()
    store_pipelines_response(
        "twin", pipelines, how="upload", workspace_id=connection.dataset.workspace_id
    )
    twin1 = upload_and_review(first_doc, dataset="twin", as_of=pull1.started_at)
    twin2 = upload_and_review(second_doc, dataset="twin", as_of=pull2.started_at)
    assert comparable(run1) == comparable(twin1)
    assert comparable(run2) == comparable(twin2)
    findings1, _, _ = comparable(run1)
    assert not any(kind == "unknown_stage" for kind, *_ in findings1)  # custom stages known
    findings2, resolved2, _ = comparable(run2)
    assert any("23" in ids for _, ids in resolved2)  # the archived deal's findings resolved
    assert ("company_same_domain", ("1", "2")) in resolved2  # merged away: resolved
    assert not any(kind == "dangling_reference" for kind, *_ in findings2)
    assert not any("2" in ids for kind, ids, *_ in findings2 if kind.startswith("company"))
    assert {status for _, _, status, _ in findings2} >= {"new", "open"}
    # the token is in no stored byte of the pull's batch
    assert TOKEN not in json.dumps([f.name for f in run2.batch.files.all()])
    assert not PullChunk.objects.exists()


def test_an_interrupted_pull_resumes_from_its_checkpoint(postgres, hubspot, settings):
    portal = hubspot.portal
    connection = connected()
    settings.HUBSPOT_MAX_RETRIES = 0
    pull = pulls.request_pull(connection, by="test")
    portal.revoke_after = None
    # HubSpot goes down after the contacts' first page: the pull fails, its answers kept.
    portal.fail_next = []
    answered = portal.requests
    original = portal.fail_next

    class DownAfter(list):
        def __bool__(self):
            return portal.requests - answered >= 4

        def pop(self, index=0):
            return 503

    portal.fail_next = DownAfter()
    failed, _ = pulls.execute_pull(pull.pk, dispatch=False)
    assert failed.status == Pull.Status.FAILED and "503" in failed.error
    assert failed.progress["resumable"] is True
    chunks = PullChunk.objects.filter(pull=failed)
    # The answers, and beside them which properties each type's answers held.
    kept = chunks.exclude(step__startswith="props:").count()
    assert kept == 3 and not Batch.objects.exists()
    assert set(chunks.filter(step__startswith="props:").values_list("step", flat=True)) == {
        "props:companies",
        "props:contacts",
    }
    before = portal.requests
    portal.fail_next = original
    again = pulls.request_pull(connection, by="test")
    assert again.pk == pull.pk  # the same pull, resumed
    done, submission = pulls.execute_pull(again.pk, dispatch=False)
    assert done.status == Pull.Status.DONE
    assert done.records == 85
    # It did not ask again for what it had: pipelines, companies and contacts answered,
    # a 503 for the deals; then the deals and the 3 association reads.
    assert [step for (step,) in PullChunk.objects.none().values_list("step")] == []
    assert portal.requests - before == 4
    assert done.requests == 3 + 1 + 4


def test_a_token_revoked_mid_pull_fails_clearly_and_stores_nothing(postgres, hubspot):
    portal = hubspot.portal
    connection = connected()
    portal.revoke_after = portal.requests + 3
    pull = pulls.request_pull(connection, by="test")
    failed, submission = pulls.execute_pull(pull.pk, dispatch=False)
    assert submission is None
    assert failed.status == Pull.Status.FAILED
    assert "HubSpot refused the token (401)" in failed.error
    assert "connect the dataset again" in failed.error
    assert not Batch.objects.exists() and not PullChunk.objects.exists()
    assert pulls.request_pull(connection, by="test").pk != pull.pk  # starts over


def test_one_pull_per_dataset_at_a_time(postgres, hubspot):
    connection = connected()
    pulls.request_pull(connection, by="test")
    with pytest.raises(pulls.AlreadyPulling):
        pulls.request_pull(connection, by="test")


def test_a_pull_claimed_by_another_worker_is_not_run_twice(postgres, hubspot):
    connection = connected()
    pull = pulls.request_pull(connection, by="test")
    assert pulls.claim(pull.pk) is not None
    assert pulls.execute_pull(pull.pk, dispatch=False) == (None, None)


def test_the_portals_pipelines_become_the_datasets_before_its_review(postgres, hubspot):
    connection = connected()
    _, run = pull_and_review(connection)
    dataset = connection.dataset
    dataset.refresh_from_db()
    stages = {s["id"] for p in dataset.pipelines for s in p["stages"]}
    assert {"1001", "1002", "1003", "closedwon"} <= stages
    assert dataset.pipelines_from == "connector"
    # The sync itself was read with them: its custom-pipeline deals have known stages.
    assert run.batch.stage_source == "dataset"
    assert run.batch.workspace_id == dataset.workspace_id
    assert not run.findings.filter(kind="unknown_stage").exists()


def test_a_full_pull_is_due_weekly(postgres, hubspot):
    connection = connected()
    pull_and_review(connection)
    connection.refresh_from_db()
    assert pulls.request_pull(connection).kind == Pull.Kind.INCREMENTAL
    Pull.objects.filter(status=Pull.Status.QUEUED).delete()
    Connection.objects.filter(pk=connection.pk).update(
        last_full_at=connection.last_full_at - __import__("datetime").timedelta(days=8)
    )
    connection.refresh_from_db()
    assert pulls.request_pull(connection).kind == Pull.Kind.FULL
    assert time.time() > 0


def test_a_pull_from_a_portal_without_dealstage_is_a_partial_run(postgres, hubspot):
    """The portal returns no dealstage property: the pull's run is partial, names it and
    the kinds it switched off, and reports no deal as without a stage (issue 37)."""
    hubspot.portal.lacks["deals"] = {"dealstage"}
    _, run = pull_and_review(connected())

    report = run_report(run)
    assert report["run"]["partial"] is True
    (missing,) = report["run"]["missing_columns"]
    assert (missing["list"], missing["properties"]) == ("deals", ["dealstage"])
    assert "won_without_close_date" in report["run"]["switched_off"]
    assert not any(f["kind"] == "missing_stage" for f in report["findings"])
    assert report["verdict"] == "request_changes"  # a critical kind is unknown


def test_a_pull_stops_at_the_daily_floor_says_so_and_resumes_later(postgres, hubspot, settings):
    """HUBSPOT_DAILY_FLOOR: once the portal's calls left today (every integration's) are
    at or under it, the pull sends nothing more and fails, resumable, naming the setting."""
    portal = hubspot.portal
    connection = connected()
    settings.HUBSPOT_DAILY_FLOOR = portal.daily - portal.daily_used - 4
    pull = pulls.request_pull(connection, by="test")
    failed, submission = pulls.execute_pull(pull.pk, dispatch=False)
    assert submission is None and failed.status == Pull.Status.FAILED
    assert failed.error.startswith("rate limit: the portal has ")
    assert "HUBSPOT_DAILY_FLOOR" in failed.error
    assert failed.progress["resumable"] is True and failed.requests == 4
    settings.HUBSPOT_DAILY_FLOOR = 0
    done, _ = pulls.execute_pull(pulls.request_pull(connection, by="test").pk, dispatch=False)
    assert done.pk == pull.pk and done.status == Pull.Status.DONE


def test_associations_hubspot_cannot_read_fail_the_pull_naming_them(postgres, hubspot):
    """A 207 that leaves contact 13's companies unread, asked twice: the pull does not
    review the contact as if it had no company; it fails naming the record and HubSpot's
    message, keeps its answers, and the retry reads it."""
    portal = hubspot.portal
    connection = connected()
    portal.association_errors = {"13": 2}
    pull = pulls.request_pull(connection, by="test")
    failed, submission = pulls.execute_pull(pull.pk, dispatch=False)
    assert submission is None and failed.status == Pull.Status.FAILED
    assert "HubSpot answered 207: the companies of 1 contact could not be read, asked" in (
        failed.error
    )
    assert "13: INTERNAL_ERROR: Internal error reading associations" in failed.error
    assert failed.progress["resumable"] is True and not Batch.objects.exists()
    done, submission = pulls.execute_pull(
        pulls.request_pull(connection, by="test").pk, dispatch=False
    )
    assert done.status == Pull.Status.DONE
    start_review.apply(kwargs={"run_id": submission.run.pk})
    report = run_report(submission.run)
    assert not any(
        "13" in f["record_ids"] and f["kind"] == "contact_missing_company"
        for f in report["findings"]
    )
