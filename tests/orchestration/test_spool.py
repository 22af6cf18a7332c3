"""Uploads received while the database is down are kept in the spool (503), then imported
through the normal store -> parse -> serve path once it is back.

The outage is injected at Django's connection boundary (connection.execute_wrapper): from
the store step's first INSERT on, every statement fails as a refused connection does.
transaction=True, so that no test transaction wraps the outage: the store's own atomic
block is the outermost, and rolls back on the real connection."""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from datetime import UTC, datetime

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import OperationalError, connection
from django.urls import reverse

from reviews.apiauth.tokens import create_token
from reviews.models import Batch, BatchFile, ReviewRun
from reviews.orchestration.intake.spool_import import import_spool
from reviews.orchestration.run import sweep, tasks
from reviews.orchestration.store import spool
from reviews.orchestration.store.blob_store import Source, file_bytes
from reviews.web.uploads import NOT_KEPT, SPOOLED
from tests.uploads import DATA

pytestmark = pytest.mark.django_db(transaction=True)

SEED = (DATA / "seed-example.json").read_bytes()
REFUSED = 'connection to server at "127.0.0.1", port 5432 failed: Connection refused'


class Outage:
    """Statements pass until the store step's first INSERT into reviews_batch (or from
    the start: `down`); from then on every statement fails (the database went away)
    until the outage ends."""

    def __init__(self, down: bool = False) -> None:
        self.down = down
        self.refused: list[str] = []

    def __call__(self, execute, sql, params, many, context):
        if self.down or sql.startswith('INSERT INTO "reviews_batch"'):
            self.down = True
            self.refused.append(sql)
            raise OperationalError(REFUSED)
        return execute(sql, params, many, context)


@contextmanager
def database_down(*, from_start: bool = False):
    outage = Outage(down=from_start)
    with connection.execute_wrapper(outage):
        yield outage
    assert outage.refused, "the outage never began: nothing tried to store"


@pytest.fixture
def spool_dir(settings, tmp_path):
    settings.SPOOL_DIR = tmp_path / "spool"
    return settings.SPOOL_DIR


@pytest.fixture
def member(django_user_model):
    return django_user_model.objects.create_user("member", password="member-pass-1")


@pytest.fixture
def member_client(client, member):
    client.force_login(member)
    return client


def post_form(client, *files: tuple[str, bytes], **data):
    uploads = [SimpleUploadedFile(name, content) for name, content in files]
    return client.post(reverse("reviews:upload"), {"files": uploads, **data})


def only_folder(spool_dir):
    (folder,) = [p for p in spool_dir.iterdir()]
    return folder


def test_an_upload_sent_while_the_database_is_down_is_spooled_and_imported_when_it_is_back(
    member_client, member, spool_dir
):
    with database_down():
        response = post_form(
            member_client,
            ("nightly.json", SEED),
            dataset="acme-crm",
            as_of="2026-08-01T09:00",
        )

    assert response.status_code == 503
    assert response["Retry-After"] == "60"
    assert SPOOLED.capitalize() in response.content.decode()
    assert not Batch.objects.exists()
    # The spool holds the bytes as received and who sent them, how, when and why.
    folder = only_folder(spool_dir)
    assert (folder / "files" / "0").read_bytes() == SEED
    meta = json.loads((folder / "meta.json").read_text())
    received = datetime.fromisoformat(meta.pop("received_at"))
    assert abs((datetime.now(UTC) - received).total_seconds()) < 60
    claim = meta.pop("intake_key")  # the upload's one claim, which its batch will hold
    assert len(claim) == 32
    assert meta == {
        "id": folder.name,
        "channel": "form",
        "user_id": member.pk,
        "sender": None,  # checked against the database when it was received
        "dataset": "acme-crm",
        "workspace_id": None,  # the form had no choice; checked at import
        "as_of": "2026-08-01T09:00:00+00:00",
        "rate_keys": [f"user:{member.pk}"],
        "idempotency_key": None,
        "idempotency_sha256": None,
        "refused": [],
        "error": f"OperationalError: {REFUSED}",
        "files": [{"name": "nightly.json", "path": "files/0", "size": len(SEED)}],
    }
    assert sweep.sweep().spooled == 1

    report = import_spool()

    batch = Batch.objects.get()
    assert report.imported == [(folder.name, batch.pk)]
    assert not folder.exists()
    assert sweep.sweep().spooled == 0
    assert file_bytes(BatchFile.objects.get(batch=batch)) == SEED
    assert (batch.created_by, batch.status, batch.dataset.name) == (member, "accepted", "acme-crm")
    assert batch.created_at == received  # reviewed as of when it was received
    assert batch.intake_key == claim
    assert batch.as_of == datetime(2026, 8, 1, 9, tzinfo=UTC)
    run = batch.runs.get()  # tasks are eager here: reviewed at once
    assert (run.status, run.created_by) == (ReviewRun.Status.DONE, member)


def test_a_big_upload_spooled_from_its_temporary_file_is_kept_whole(
    member_client, spool_dir, settings
):
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 1024  # the upload goes to a temporary file
    settings.PARSE_IN_WEB_MAX_BYTES = 1024  # and is stored for a worker to parse
    companies = (DATA.parent.parent / "samples" / "hubspot" / "companies.csv").read_bytes()
    deals = (DATA.parent.parent / "samples" / "hubspot" / "deals.csv").read_bytes()
    with database_down():
        response = post_form(member_client, ("companies.csv", companies), ("deals.csv", deals))

    assert response.status_code == 503
    folder = only_folder(spool_dir)
    assert (folder / "files" / "0").read_bytes() == companies
    assert (folder / "files" / "1").read_bytes() == deals

    ((_, batch_id),) = import_spool().imported

    stored = {f.name: file_bytes(f) for f in BatchFile.objects.filter(batch_id=batch_id)}
    assert stored == {"companies.csv": companies, "deals.csv": deals}
    assert Batch.objects.get(pk=batch_id).runs.count() == 1


def test_an_upload_the_form_refused_is_spooled_and_stored_rejected_with_the_reason(
    member_client, spool_dir
):
    with database_down():
        response = post_form(member_client, ("nightly.json", SEED), as_of="not a time")

    assert response.status_code == 503
    meta = spool.read_meta(only_folder(spool_dir))
    assert meta["refused"] == ["as_of: Enter a valid date/time."]

    import_spool()

    batch = Batch.objects.get()
    assert (batch.status, batch.errors) == ("rejected", ["as_of: Enter a valid date/time."])
    assert file_bytes(batch.files.get()) == SEED
    assert not batch.runs.exists()


def test_an_api_upload_sent_while_the_database_is_down_is_spooled(
    client, django_user_model, spool_dir
):
    user = django_user_model.objects.create_user("robot", password="robot-pass-123")
    secret = create_token(user, "nightly export").secret
    with database_down():
        response = client.post(
            reverse("api:batches") + "?dataset=acme-crm",
            data=SEED,
            content_type="application/json",
            headers={"Authorization": f"Bearer {secret}", "Idempotency-Key": "night-1"},
        )

    assert response.status_code == 503, response.content
    assert response["Retry-After"] == "60"
    folder = only_folder(spool_dir)
    assert response.json() == {"detail": SPOOLED, "spool_id": folder.name}
    assert (folder / "files" / "0").read_bytes() == SEED
    meta = spool.read_meta(folder)
    assert (meta["channel"], meta["user_id"]) == ("api", user.pk)
    assert meta["rate_keys"] == [f"user:{user.pk}"]  # as the page counts
    assert (meta["dataset"], meta["idempotency_key"]) == ("acme-crm", "night-1")
    assert meta["files"] == [{"name": "body.json", "path": "files/0", "size": len(SEED)}]

    import_spool()

    batch = Batch.objects.get()
    assert (batch.created_by, batch.dataset.name) == (user, "acme-crm")
    assert batch.runs.get().status == ReviewRun.Status.DONE
    assert not folder.exists()


def test_an_upload_stays_spooled_while_the_database_is_still_down(member_client, spool_dir):
    with database_down():
        post_form(member_client, ("nightly.json", SEED))
    folder = only_folder(spool_dir)

    with database_down():
        report = import_spool()

    assert (report.imported, report.failed, report.waiting) == ([], [], [folder.name])
    assert spool.import_error(folder) is None  # tried again by the next sweep
    assert not Batch.objects.exists()
    assert [folder] == spool.pending()

    with database_down(from_start=True):  # even its sender cannot be looked up
        report = import_spool()

    assert (report.imported, report.failed, report.waiting) == ([], [], [folder.name])
    assert spool.import_error(folder) is None


def test_an_upload_that_cannot_be_imported_stays_with_its_reason(member_client, spool_dir):
    with database_down():
        post_form(member_client, ("nightly.json", SEED))
    folder = only_folder(spool_dir)
    (folder / "files" / "0").write_bytes(SEED[:100])  # damaged on disk since

    report = import_spool()

    reason = f"ValueError: files/0: 100 bytes, {len(SEED):,} were received"
    assert report.failed == [(folder.name, reason)]
    assert spool.import_error(folder) == reason
    assert spool.read_meta(folder)["files"][0]["size"] == len(SEED)  # as written
    assert not Batch.objects.exists()
    # Not tried again by every sweep; the command tries again on request, and says why.
    assert spool.pending() == [] and sweep.sweep().spooled == 0
    with pytest.raises(SystemExit) as exit_:
        call_command("import_spool", "--retry-failed")
    assert exit_.value.code == 1
    assert folder.exists()
    (folder / "files" / "0").write_bytes(SEED)  # repaired

    call_command("import_spool", "--retry-failed")

    assert file_bytes(Batch.objects.get().files.get()) == SEED
    assert not folder.exists()


def test_a_folder_being_written_is_not_imported(spool_dir):
    (spool_dir / ".tmp-20260101T000000-abc" / "files").mkdir(parents=True)

    assert spool.pending() == []
    assert import_spool().imported == []


def test_the_review_command_reports_an_unavailable_database(tmp_path):
    path = tmp_path / "nightly.json"
    path.write_bytes(SEED)

    with database_down(), pytest.raises(CommandError) as error:
        call_command("review", str(path))

    assert error.value.returncode == 3
    assert str(error.value).startswith("the database is unavailable, nothing was stored")
    assert REFUSED in str(error.value)
    assert not Batch.objects.exists()


@pytest.mark.integration
def test_the_beat_sweep_imports_the_spool_through_a_real_worker(
    request, monkeypatch, spool_dir, django_user_model
):
    user = django_user_model.objects.create_user("robot", password="robot-pass-123")
    spool_id = spool.spool_upload(
        [Source(name="nightly.json", size=len(SEED), chunks=lambda: (SEED,))],
        channel="api",
        user_id=user.pk,
        error=f"OperationalError: {REFUSED}",
    )
    monkeypatch.setenv("SPOOL_DIR", str(spool_dir))  # the worker's spool is this one
    request.getfixturevalue("worker")

    tasks.sweep.apply()  # what beat sends every SWEEP_INTERVAL_SECONDS

    deadline = time.monotonic() + 60
    while (spool_dir / spool_id).exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not (spool_dir / spool_id).exists()
    batch = Batch.objects.get()
    assert (batch.created_by, file_bytes(batch.files.get())) == (user, SEED)
    while not batch.runs.filter(status=ReviewRun.Status.DONE).exists():
        assert time.monotonic() < deadline, "the imported upload was never reviewed"
        time.sleep(0.2)


def test_the_spool_keeps_nothing_past_its_size_limit(member_client, spool_dir, settings, caplog):
    settings.SPOOL_MAX_BYTES = len(SEED) + len(SEED) // 2  # room for one upload, not two
    with database_down():
        kept = post_form(member_client, ("first.json", SEED))
    with database_down():
        refused = post_form(member_client, ("second.json", SEED))

    assert kept.status_code == 503 and SPOOLED.capitalize() in kept.content.decode()
    assert refused.status_code == 503
    assert refused["Retry-After"] == "60"
    page = refused.content.decode()
    assert NOT_KEPT.capitalize() in page and "kept as" not in page
    folder = only_folder(spool_dir)  # the first only, and no half-written second
    assert spool.read_meta(folder)["files"][0]["name"] == "first.json"
    assert "upload not kept: the spool holds" in caplog.text

    import_spool()  # the database is back: the spool drains, and has room again
    assert spool.spool_bytes() == 0
    with database_down():
        assert (
            SPOOLED.capitalize() in post_form(member_client, ("second.json", SEED)).content.decode()
        )


def test_an_api_upload_past_the_spool_limit_is_refused_without_a_spool_id(
    client, django_user_model, spool_dir, settings
):
    settings.SPOOL_MAX_BYTES = len(SEED) - 1
    user = django_user_model.objects.create_user("robot", password="robot-pass-123")
    secret = create_token(user, "nightly export").secret
    with database_down():
        response = client.post(
            reverse("api:batches"),
            data=SEED,
            content_type="application/json",
            headers={"Authorization": f"Bearer {secret}"},
        )

    assert response.status_code == 503, response.content
    assert response["Retry-After"] == "60"
    assert response.json() == {"detail": NOT_KEPT, "spool_id": None}
    assert not spool_dir.exists() or not any(spool_dir.iterdir())
