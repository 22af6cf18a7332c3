from __future__ import annotations

import ast
import functools
import itertools
import os
import re
import shutil
from pathlib import Path

import hypothesis
import pytest
from _pytest.mark.expression import Expression
from django.conf import settings
from django.db import connection

from revreview.celery import app
from tests import migrated_db, services
from tests.llm.fake_gateway import FakeGateway

# Property tests check what, never how fast (speed is bench/'s): a loaded 2-core machine
# must not fail one on hypothesis's 200 ms deadline for an example.
hypothesis.settings.register_profile("revreview", deadline=None)
hypothesis.settings.load_profile("revreview")


def pytest_configure(config) -> None:
    """schemathesis's plugin (kept from loading by itself: pyproject.toml's addopts)
    serves test_openapi_schemathesis.py alone, an integration module: loaded only under
    a -m that may collect it. Importing it cost every process of the fast loop about
    half a second of its start-up."""
    if not _leaves_out_integration(config.option.markexpr):
        config.pluginmanager.import_plugin("schemathesis.pytest.plugin")


def pytest_report_header(config) -> list[str]:
    return [
        f"postgres: {settings.POSTGRES_PROBLEM or services.POSTGRES_URL}",
        f"redis: {settings.REDIS_PROBLEM or services.REDIS_URL}",
    ]


# A test that asks for one of these needs a real service or process beside pytest, so it is
# `integration` without saying so itself: `pytest -m "not integration"` (the fast loop)
# leaves it out. `postgres` marks what relies on Postgres itself (COPY, lz4, its errors).
# (Fixtures built on these, such as api_url or own_redis, count through them.)
SERVICE_FIXTURES = frozenset({"postgres", "redis_url", "worker", "live_server", "s3_store"})
# Folders whose tests all run real servers or tools (gunicorn, nginx, compose, `make run`).
INTEGRATION_FOLDERS = ("deploy",)


def pytest_ignore_collect(collection_path: Path, config) -> bool | None:
    """Under a -m that leaves every integration test out (the fast loop), a folder or
    module that is all integration is not even imported: collecting them cost each
    xdist worker about 4 s (schemathesis builds its cases at collection)."""
    if not _leaves_out_integration(config.option.markexpr):
        return None
    tests = Path(__file__).parent
    if collection_path.parent == tests and collection_path.name in INTEGRATION_FOLDERS:
        return True
    if collection_path.suffix == ".py" and collection_path.name.startswith("test_"):
        return _marked_integration(collection_path) or None
    return None


@functools.cache
def _leaves_out_integration(markexpr: str) -> bool:
    """Whether `-m markexpr` deselects a test marked integration whatever its other
    marks: false for every assignment of the other names the expression uses."""
    if not markexpr or "(" in markexpr:  # marks' arguments: not worked out, all collected
        return False
    others = sorted(set(re.findall(r"[A-Za-z_]\w*", markexpr)) - {"and", "or", "not"})
    others = [name for name in others if name != "integration"]
    if len(others) > 8:
        return False  # not worth working out: collect everything
    expression = Expression.compile(markexpr)
    for values in itertools.product((False, True), repeat=len(others)):
        marks = {"integration", *(name for name, on in zip(others, values, strict=True) if on)}
        if expression.evaluate(marks.__contains__):
            return False
    return True


def _marked_integration(path: Path) -> bool:
    """A module whose `pytestmark` names pytest.mark.integration (not in a call)."""
    for node in ast.parse(path.read_bytes()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytestmark" for target in node.targets
        ):
            value = node.value
            marks = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
            return any(ast.unparse(mark) == "pytest.mark.integration" for mark in marks)
    return False


def pytest_collection_modifyitems(config, items) -> None:
    tests = Path(__file__).parent
    for item in items:
        folder = Path(item.path).relative_to(tests).parts[0]
        if folder in INTEGRATION_FOLDERS or SERVICE_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix) -> None:
    """pytest-django's step before it makes the test database: on SQLite (the fast loop),
    made from a kept migrated copy (tests/migrated_db.py)."""
    if connection.vendor == "sqlite":
        migrated_db.use_a_migrated_copy()


@pytest.fixture(scope="session", autouse=True)
def _empty_test_cache():
    """Each run starts from an empty cache: with Redis that is the test db, whose
    counters (the per-address rate limit) would otherwise add up across runs within an
    hour when the fast loop leaves out the tests that flush it."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(scope="session", autouse=True)
def _no_batch_finds_what_another_kept():
    """The process keeps one parsed batch by its id (reviews.orchestration.store.parsed),
    and the tables keep a batch by its id and content (store/table_files.py); stored
    batches never change and, in production, their ids are never reused. On SQLite a
    rolled-back test frees its batches' ids: the next test's batch may get one again, with
    the same content (the same sample uploaded), and would read the other's tables. So
    what is kept under an id goes when a batch row is made with that id, before anything
    can read it, and nothing else goes: a module's batches (tests/workspaces/conftest.py)
    keep their tables from test to test, not built again for each."""
    from django.db.models.signals import post_save

    from reviews.models import Batch
    from reviews.orchestration.store.parsed import forget_parsed
    from reviews.orchestration.store.table_files import tables_folders
    from revreview import store

    def forget(sender, instance, created, **kwargs) -> None:
        if not created:
            return
        forget_parsed(instance.pk)
        for folder in tables_folders(instance.pk):
            shutil.rmtree(folder, ignore_errors=True)
        # The test store's folder, as it is: a test may have made its store unwritable.
        shutil.rmtree(Path(settings.STORE_DIR, store.batch_prefix(instance.pk), "tables"), True)

    post_save.connect(forget, sender=Batch, dispatch_uid="tests-new-batch-id")
    yield
    post_save.disconnect(sender=Batch, dispatch_uid="tests-new-batch-id")


def require(problem: str | None) -> None:
    """Skip (or, under CI, fail) a test whose service is missing."""
    if problem:
        if services.CI and not services.NO_SERVICES:
            pytest.fail(problem)
        pytest.skip(problem)


@pytest.fixture(autouse=True)
def members_of_default_workspace(request):
    """Tests written before workspaces make users and expect them to see what they
    upload (into the default workspace): while a test runs, each user it makes joins the
    default workspace, as a reviewer (a superuser as admin). A test marked
    `own_workspaces` sets memberships itself. The app never does this: a new user is a
    member of nothing until added."""
    if request.node.get_closest_marker("own_workspaces"):
        yield
        return
    from django.contrib.auth import get_user_model
    from django.db.models.signals import post_save

    from workspaces.models import Membership, Role, default_workspace

    def join(sender, instance, created, raw=False, **kwargs) -> None:
        if created and not raw:
            role = Role.ADMIN if instance.is_superuser else Role.REVIEWER
            Membership.objects.get_or_create(
                workspace=default_workspace(), user=instance, defaults={"role": role}
            )

    user_model = get_user_model()
    post_save.connect(join, sender=user_model, dispatch_uid="tests-default-workspace")
    try:
        yield
    finally:
        post_save.disconnect(sender=user_model, dispatch_uid="tests-default-workspace")


@pytest.fixture
def postgres() -> None:
    require(settings.POSTGRES_PROBLEM)


@pytest.fixture
def redis_url() -> str:
    require(settings.REDIS_PROBLEM)
    import redis

    redis.Redis.from_url(services.REDIS_URL).flushdb()
    return services.REDIS_URL


@pytest.fixture
def worker(postgres, redis_url):
    """A worker process using the test database and the test Redis, as deployed."""
    db = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "revreview.settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": redis_url,
        "CELERY_TASK_ALWAYS_EAGER": "false",
    }
    app.conf.task_always_eager = False
    try:
        with services.celery_worker(env) as process:
            yield process
    finally:
        app.conf.task_always_eager = True


@pytest.fixture
def s3_store(monkeypatch, settings):
    """The store on an S3-compatible server on loopback (tests/s3.py) for this test."""
    from revreview.store_settings import store_backend
    from tests.s3 import CREDENTIALS, REGION, s3_server

    with s3_server() as server:
        for name, value in CREDENTIALS.items():
            monkeypatch.setenv(name, value)
        backend = store_backend(
            server.store_url, Path(), endpoint_url=server.endpoint_url, region=REGION
        )
        settings.STORAGES = {**settings.STORAGES, "batches": backend}
        yield server


@pytest.fixture
def fake_gateway():
    """A real OpenAI-compatible HTTP server on 127.0.0.1, replies scripted per model."""
    gateway = FakeGateway().start()
    try:
        yield gateway
    finally:
        gateway.stop()
