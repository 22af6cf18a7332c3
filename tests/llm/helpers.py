"""Shared by the model-pass tests here and the end-to-end ones in tests/."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import redis

from reviews.llm.roster import CHEAP, CHEAP_FAILBACK, MID, MID_FAILBACK

API_KEY = "sk-test-5e3c1a9f-never-log-me"

# Every model the tests call: the default roster and its default failbacks.
MODELS = {CHEAP, MID, CHEAP_FAILBACK, MID_FAILBACK}


def own_redis(settings, redis_url: str) -> str:
    """A Redis database of these tests' own for the breakers (the cache) and the budget
    counter (REDIS_URL), flushed, returned as a URL.

    Every test that asks for `redis_url` flushes the test database, and suites run side
    by side on one machine share it: a breaker test that waits out a cooldown would see
    its state vanish, and another suite's spend could refuse a reservation. The next
    database down is used by the model-pass tests only."""
    parts = urlsplit(redis_url)
    own = urlunsplit(parts._replace(path=f"/{int(parts.path.strip('/') or 0) - 1}"))
    redis.Redis.from_url(own).flushdb()
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": own}
    }
    settings.REDIS_URL = own
    return own
