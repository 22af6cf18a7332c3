"""Pages work without Redis: with the cache (sessions' first stop, tokens, breakers)
unreachable, signing in, the runs list, the upload form and an upload go on with the
database, and the rate limit allows what it cannot count. A Redis of the test's own is
started on a free port and stopped (never the shared one)."""

from __future__ import annotations

import pytest
from django.core.cache import caches
from django.urls import reverse

from reviews.models import Batch, ReviewRun
from reviews.orchestration.store.blob_store import file_bytes
from tests.orchestration.test_worker_recovery import private_redis
from tests.uploads import DATA

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

SEED = (DATA / "seed-example.json").read_bytes()
PASSWORD = "member-pass-1"  # noqa: S105 (a test user's)


@pytest.fixture
def stopped_redis(settings, tmp_path):
    """The cache and sessions as deployed (cached_db on Redis), on a private Redis that
    is then stopped."""
    with private_redis(tmp_path) as server:
        settings.CACHES = {
            "default": {"BACKEND": "revreview.cache.ForgivingRedisCache", "LOCATION": server.url}
        }
        settings.SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
        settings.REDIS_URL = server.url
        settings.RATE_LIMIT_PER_HOUR = 100
        caches["default"].set("probe", 1)
        assert caches["default"].get("probe") == 1  # up
        server.stop()
        yield server


def test_sign_in_pages_and_an_upload_work_while_redis_is_down(
    client, django_user_model, stopped_redis, django_capture_on_commit_callbacks
):
    assert caches["default"].get("probe") is None  # down: a miss, not an error
    django_user_model.objects.create_user("member", password=PASSWORD)

    assert client.get(reverse("login")).status_code == 200
    signed = client.post(reverse("login"), {"username": "member", "password": PASSWORD})
    assert signed.status_code == 302, signed.content[:500]
    assert client.get(reverse("reviews:runs")).status_code == 200
    assert client.get(reverse("reviews:upload")).status_code == 200

    with django_capture_on_commit_callbacks(execute=True):
        from django.core.files.uploadedfile import SimpleUploadedFile

        uploaded = client.post(
            reverse("reviews:upload"), {"files": [SimpleUploadedFile("seed.json", SEED)]}
        )
    assert uploaded.status_code == 302, uploaded.content[:1000]
    (batch,) = Batch.objects.all()
    assert file_bytes(batch.files.get()) == SEED
    assert batch.runs.get().status in (ReviewRun.Status.DONE, ReviewRun.Status.QUEUED)


def test_the_session_survives_redis_coming_back(client, django_user_model, stopped_redis):
    django_user_model.objects.create_user("member", password=PASSWORD)
    client.post(reverse("login"), {"username": "member", "password": PASSWORD})
    stopped_redis.start()  # back, with nothing of the session: it is in the database

    assert client.get(reverse("reviews:runs")).status_code == 200
