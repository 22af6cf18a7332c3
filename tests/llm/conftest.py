from __future__ import annotations

import pytest

from reviews.llm.breaker import Breaker
from tests.llm.helpers import API_KEY, MODELS, own_redis


@pytest.fixture
def llm_settings(settings, fake_gateway):
    """Point the model pass at the fake gateway, with short timeouts and cooldowns."""
    settings.LLM_BASE_URL = fake_gateway.base_url
    settings.LLM_API_KEY = API_KEY
    settings.LLM_TIMEOUT_SECONDS = 1
    settings.BREAKER_FAILURE_THRESHOLD = 3
    settings.BREAKER_COOLDOWN_SECONDS = 1
    # Unlimited, so a budget counter other test runs share never refuses these calls
    # (reservations are still made and settled).
    settings.DAILY_TOKEN_BUDGET = 0
    return settings


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
    """Breakers and budget on a Redis database of their own, returned as a URL (see
    tests.llm.helpers.own_redis)."""
    return own_redis(settings, redis_url)
