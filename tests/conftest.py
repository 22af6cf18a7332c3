from __future__ import annotations

import os

import pytest
from django.conf import settings
from django.db import connection

from revreview.celery import app
from tests import services
from tests.llm.fake_gateway import FakeGateway


def pytest_report_header(config) -> list[str]:
    return [
        f"postgres: {settings.POSTGRES_PROBLEM or services.POSTGRES_URL}",
        f"redis: {settings.REDIS_PROBLEM or services.REDIS_URL}",
    ]


def require(problem: str | None) -> None:
    """Skip (or, under CI, fail) a test whose service is missing."""
    if problem:
        if services.CI:
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
def fake_gateway():
    """A real OpenAI-compatible HTTP server on 127.0.0.1, replies scripted per model."""
    gateway = FakeGateway().start()
    try:
        yield gateway
    finally:
        gateway.stop()
