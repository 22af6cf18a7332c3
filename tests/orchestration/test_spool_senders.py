"""The sender of an upload spooled while the database was down, checked at import: an
upload whose session or token no longer holds is stored rejected with the reason."""

from __future__ import annotations

import pytest

from reviews.apiauth.models import ApiToken
from reviews.apiauth.tokens import create_token, digest
from reviews.models import Batch
from reviews.orchestration.intake.spool_import import import_spool
from reviews.orchestration.store import spool
from reviews.orchestration.store.blob_store import Source
from tests.uploads import DATA

pytestmark = pytest.mark.django_db(transaction=True)

SEED = (DATA / "seed-example.json").read_bytes()
STALE_SESSION = "the session that sent this upload was no longer valid when it was imported"
STALE_TOKEN = "the API token that sent this upload was no longer valid when it was imported"


@pytest.fixture(autouse=True)
def spool_dir(settings, tmp_path):
    settings.SPOOL_DIR = tmp_path / "spool"


def imported(user_id, sender) -> Batch:
    source = Source(name="nightly.json", size=len(SEED), chunks=lambda: (SEED,))
    spool.spool_upload(
        [source], channel="form", user_id=user_id, sender=sender, error="OperationalError: x"
    )
    ((_, batch_id),) = import_spool().imported
    return Batch.objects.get(pk=batch_id)


def test_a_session_of_an_inactive_or_deleted_user_is_refused(django_user_model):
    member = django_user_model.objects.create_user("member", password="member-pass-1")
    sender = {"via": "session", "session_auth_hash": member.get_session_auth_hash()}
    django_user_model.objects.filter(pk=member.pk).update(is_active=False)

    batch = imported(member.pk, sender)

    assert (batch.status, batch.created_by) == ("rejected", None)
    assert batch.errors == [f"{STALE_SESSION}: user member is inactive"]
    assert imported(10**9, sender).errors == [f"{STALE_SESSION}: user 1000000000 no longer exists"]


def test_a_session_that_still_holds_is_its_users(django_user_model):
    member = django_user_model.objects.create_user("member", password="member-pass-1")
    sender = {"via": "session", "session_auth_hash": member.get_session_auth_hash()}

    batch = imported(member.pk, sender)

    assert (batch.status, batch.created_by) == ("accepted", member)


def test_a_token_whose_user_is_inactive_or_that_lacks_the_scope_is_refused(django_user_model):
    robot = django_user_model.objects.create_user("robot")
    reader = create_token(robot, "reader", [ApiToken.Scope.READ])
    reading = {"via": "token", "token_sha256": digest(reader.secret)}
    assert imported(robot.pk, reading).errors == [
        f"{STALE_TOKEN}: token {reader.token} lacks the 'upload' scope"
    ]
    uploader = create_token(robot, "uploader").secret
    django_user_model.objects.filter(pk=robot.pk).update(is_active=False)

    batch = imported(robot.pk, {"via": "token", "token_sha256": digest(uploader)})

    assert batch.errors == [f"{STALE_TOKEN}: its user robot is inactive"]
    unknown = {"via": "token", "token_sha256": digest("rr_" + "x" * 43)}
    assert imported(robot.pk, unknown).errors == [f"{STALE_TOKEN}: there is no such token"]
    assert Batch.objects.filter(created_by__isnull=False).count() == 0
