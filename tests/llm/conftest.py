from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import pytest
import redis

from reviews.llm.breaker import Breaker
from reviews.llm.config import DEFAULT_FAILBACK_CHAIN
from tests.llm.fake_gateway import FakeGateway

API_KEY = "sk-test-5e3c1a9f-never-log-me"


@pytest.fixture
def fake_gateway():
    """A real OpenAI-compatible HTTP server on 127.0.0.1, replies scripted per model."""
    gateway = FakeGateway().start()
    try:
        yield gateway
    finally:
        gateway.stop()


@pytest.fixture
def llm_settings(settings, fake_gateway):
    """Point the model pass at the fake gateway, with short timeouts and cooldowns."""
    settings.LLM_BASE_URL = fake_gateway.base_url
    settings.LLM_API_KEY = API_KEY
    settings.LLM_TIMEOUT_SECONDS = 1
    settings.BREAKER_FAILURE_THRESHOLD = 3
    settings.BREAKER_COOLDOWN_SECONDS = 1
    return settings


# Every model the tests call: the default roster and its failbacks.
MODELS = {*DEFAULT_FAILBACK_CHAIN, *DEFAULT_FAILBACK_CHAIN.values()}


@pytest.fixture(autouse=True)
def _fresh_breakers():
    """Breakers live in the shared cache (Redis when the tests have it): reset the ones
    the tests use, and only those, so other state in that Redis is left alone."""
    for model in MODELS:
        Breaker(model).reset()
    yield
    for model in MODELS:
        Breaker(model).reset()


@pytest.fixture
def breaker_redis(settings, redis_url):
    """The breaker's cache on a Redis database of its own, returned as a URL.

    Every test that asks for `redis_url` flushes the test database, and suites run side
    by side on one machine share it: a breaker test that waits out a cooldown would see
    its state vanish. The next database down is used by these tests only."""
    parts = urlsplit(redis_url)
    own = urlunsplit(parts._replace(path=f"/{int(parts.path.strip('/') or 0) - 1}"))
    redis.Redis.from_url(own).flushdb()
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": own}
    }
    return own
