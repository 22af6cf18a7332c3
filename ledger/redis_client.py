"""The Redis connection for shared counters (daily budget, rate limit), or None in the
embedded mode (settings.REDIS_URL empty)."""

from __future__ import annotations

from functools import lru_cache

import redis
from django.conf import settings

KEY_PREFIX = "revreview:"


def get_client() -> redis.Redis | None:
    url = settings.REDIS_URL
    return _client(url) if url else None


@lru_cache(maxsize=4)
def _client(url: str) -> redis.Redis:
    # One pool per process and URL; the pool hands each thread its own connection and
    # resets itself after a fork. Short timeouts: a counter that hangs stalls a request.
    return redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=2)
