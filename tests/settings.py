"""Test settings: the app's settings on real Postgres and Redis where they are up."""

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import dj_database_url

from revreview.settings import *  # noqa: F403
from tests import services

if services.NO_SERVICES:  # the fast loop (make test-fast): SQLite and an in-memory cache
    POSTGRES_PROBLEM = REDIS_PROBLEM = services.NO_SERVICES_REASON
else:
    POSTGRES_PROBLEM = services.ensure_postgres()
    REDIS_PROBLEM = services.check_redis()
for _problem in (POSTGRES_PROBLEM, REDIS_PROBLEM):
    if _problem and services.CI and not services.NO_SERVICES:
        raise services.ServiceMissing(f"{_problem} (CI needs it; see .ci/run)")

if not POSTGRES_PROBLEM:
    DATABASES = {"default": dj_database_url.parse(services.POSTGRES_URL)}
    # One test database per pytest process, so concurrent runs on one machine never
    # drop each other's database.
    DATABASES["default"]["TEST"] = {"NAME": f"test_revreview_{os.getpid()}"}
if not REDIS_PROBLEM:
    REDIS_URL = services.REDIS_URL
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
        }
    }
    CELERY_BROKER_URL = CELERY_RESULT_BACKEND = REDIS_URL
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"  # as with REDIS_URL
    CELERY_BROKER_TRANSPORT = None  # the embedded mode's filesystem transport class

# Unit tests run tasks in-process; the integration tests start a real worker.
CELERY_TASK_ALWAYS_EAGER = True
# Nothing in a test reaches HubSpot: a test that pulls points this at its stand-in.
HUBSPOT_API_BASE_URL = "http://127.0.0.1:9"
# ...where nothing listens: a test that reaches it anyway (the walk connecting a dataset)
# is refused at once, and its retries must not wait a second each (62 s of the fast loop):
# five retries wait 0.03 s in all (0.3 s at 0.01 s).
HUBSPOT_BACKOFF_SECONDS = 0.001


def _temporary_folder(prefix: str) -> Path:
    """A new folder, removed when this process exits: the folders are each test process's
    own (every xdist worker imports these settings), so none is left in /tmp. Not by a
    forked child, which exits while its parent still uses them."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    made_by = os.getpid()

    def remove() -> None:
        if os.getpid() == made_by:
            shutil.rmtree(folder, ignore_errors=True)

    atexit.register(remove)
    return folder


# Each test process keeps batches' tables apart (a rolled-back test frees its batch's id).
TABLES_DIR = _temporary_folder("revreview-tables-")
# ...and their uploads' store (a test of the S3 store overrides STORAGES["batches"]).
STORE_DIR = _temporary_folder("revreview-store-")
# A worker or server the test starts stores uploads where the test reads them back.
os.environ["STORE_DIR"] = str(STORE_DIR)
STORAGES = {**STORAGES, "batches": store_backend("", STORE_DIR)}  # noqa: F405
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Whitenoise warns at every test client's first request when STATIC_ROOT is missing
# (collectstatic fills it for `make run` and the Docker image, not for tests).
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # noqa: F405

SECRET_KEY = "tests-only-" + "k" * 60  # not the default, which the web server refuses
# The test client and the live server speak plain HTTP; the HTTPS settings of a
# deployment are checked by tests/deploy/test_security.py (manage.py check --deploy).
SECURE_SSL_REDIRECT = False
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = False
