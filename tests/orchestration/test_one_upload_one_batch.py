"""One upload, one batch: whatever the moment the database goes away, an upload answered
"kept" is stored exactly once, in the spool or in the database, decided by one claim
(the intake key its batch row holds). Cut before the store, during it, and at its
commit when the commit went through but its answer was lost; then the spool import and
the sweep run as they do once the database is back.

transaction=True, so that no test transaction wraps the outage: the store's own atomic
block is the outermost and commits (or rolls back) on the real connection."""

from __future__ import annotations

from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import OperationalError, connection
from django.urls import reverse
from django.utils import timezone

from reviews.apiauth.tokens import create_token
from reviews.models import Batch, ReviewRun
from reviews.orchestration.intake.spool_import import import_spool
from reviews.orchestration.intake.tasks import accept_upload
from reviews.orchestration.run import sweep
from reviews.orchestration.store.blob_store import file_bytes
from reviews.web.uploads import SPOOLED
from tests.uploads import DATA

pytestmark = pytest.mark.django_db(transaction=True)

SEED = (DATA / "seed-example.json").read_bytes()
GONE = "server closed the connection unexpectedly"
BATCH_INSERT = 'INSERT INTO "reviews_batch"'


class Cut:
    """The database goes away at one moment of the store: `before` it (its first
    statement is refused), `during` it (the batch row is written, the next statement is
    refused: the rest of the store rolls back), or at its `commit` (the commit reaches the
    server and is applied, but its answer never comes back). From then on every
    statement fails, until the outage ends."""

    def __init__(self, at: str) -> None:
        self.at = at
        self.gone = False
        self.began = False  # the store's batch row was written (or refused)

    def __call__(self, execute, sql, params, many, context):
        if self.gone:
            raise OperationalError(GONE)
        if sql.startswith(BATCH_INSERT):
            self.began = True
            if self.at == "before":
                self.gone = True
                raise OperationalError(GONE)
            result = execute(sql, params, many, context)
            self.gone = self.at == "during"
            return result
        return execute(sql, params, many, context)

    def commit(self, commit):
        def lost_answer() -> None:
            if self.gone:
                raise OperationalError(GONE)
            commit()  # applied by the server ...
            if self.began and self.at == "commit":
                self.gone = True  # ... but the answer is lost on the way back
                raise OperationalError(GONE)

        return lost_answer


@contextmanager
def database_cut(at: str, monkeypatch):
    cut = Cut(at)
    monkeypatch.setattr(connection, "_commit", cut.commit(connection._commit))
    with connection.execute_wrapper(cut):
        yield cut
    monkeypatch.undo()
    assert cut.began, "the outage never began: nothing tried to store"


@pytest.fixture(autouse=True)
def spool_dir(settings, tmp_path):
    settings.SPOOL_DIR = tmp_path / "spool"
    settings.UNREAD_RESEND_SECONDS = 60
    return settings.SPOOL_DIR


def from_the_form(client, user) -> int:
    client.force_login(user)
    upload = SimpleUploadedFile("nightly.json", SEED)
    response = client.post(reverse("reviews:upload"), {"files": [upload]})
    assert SPOOLED.capitalize() in response.content.decode()
    return response.status_code


def from_the_api(client, user) -> int:
    secret = create_token(user, "nightly export").secret
    response = client.post(
        reverse("api:batches"),
        data=SEED,
        content_type="application/json",
        headers={"Authorization": f"Bearer {secret}"},
    )
    assert response.json()["spool_id"]
    return response.status_code


def back_again() -> None:
    """The database is back: the sweep imports the spool, and later sends what it finds
    stored but unread to a worker (as every SWEEP_INTERVAL_SECONDS)."""
    import_spool()
    Batch.objects.update(created_at=timezone.now() - timedelta(seconds=61))
    for message in sweep.sweep().unread:
        accept_upload.apply(kwargs=message)


@pytest.mark.parametrize("at", ["before", "during", "commit"])
@pytest.mark.parametrize("door", [from_the_form, from_the_api])
def test_an_upload_answered_kept_is_stored_and_reviewed_once(
    client, django_user_model, monkeypatch, spool_dir, at, door
):
    user = django_user_model.objects.create_user("member", password="member-pass-1")
    with database_cut(at, monkeypatch):
        status = door(client, user)

    back_again()

    assert status == 503
    batch = Batch.objects.get()  # one, whoever stored it
    assert file_bytes(batch.files.get()) == SEED
    assert ReviewRun.objects.filter(batch=batch).count() == 1
    assert not any(spool_dir.iterdir())  # imported (or found stored), and gone
