"""Django's Redis cache, forgiving while Redis is unreachable: a read is a miss, a write
is dropped, each logged (at most once a minute per process), instead of a 500 on every
page. What the cache holds can all be found or rebuilt elsewhere: sessions are
`cached_db` (a miss reads the database, which has every session), API tokens are read
from the database when the cache misses, a breaker left unknown lets calls through
(they still time out and fail back), and the rate limit allows a request it cannot
count (the daily budget still caps the spend)."""

from __future__ import annotations

import logging
import time
from typing import Any

import redis
from django.core.cache.backends.redis import RedisCache

logger = logging.getLogger(__name__)

UNREACHABLE = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
_LOG_EVERY = 60.0
_last_logged = 0.0


def _unreachable(operation: str, error: Exception) -> None:
    global _last_logged
    now = time.monotonic()
    if now - _last_logged >= _LOG_EVERY:
        _last_logged = now
        logger.warning("cache (Redis) unreachable, %s skipped: %r", operation, error)


class ForgivingRedisCache(RedisCache):
    def get(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        try:
            return super().get(key, default, version)
        except UNREACHABLE as error:
            _unreachable("get", error)
            return default

    def get_many(self, keys: Any, version: int | None = None) -> dict:
        try:
            return super().get_many(keys, version)
        except UNREACHABLE as error:
            _unreachable("get_many", error)
            return {}

    def has_key(self, key: Any, version: int | None = None) -> bool:
        try:
            return super().has_key(key, version)
        except UNREACHABLE as error:
            _unreachable("has_key", error)
            return False

    def set(self, *args: Any, **kwargs: Any) -> None:
        try:
            super().set(*args, **kwargs)
        except UNREACHABLE as error:
            _unreachable("set", error)

    def set_many(self, *args: Any, **kwargs: Any) -> list:
        try:
            return super().set_many(*args, **kwargs)
        except UNREACHABLE as error:
            _unreachable("set_many", error)
            return []

    def add(self, *args: Any, **kwargs: Any) -> bool:
        try:
            return super().add(*args, **kwargs)
        except UNREACHABLE as error:
            _unreachable("add", error)
            return False

    def touch(self, *args: Any, **kwargs: Any) -> bool:
        try:
            return super().touch(*args, **kwargs)
        except UNREACHABLE as error:
            _unreachable("touch", error)
            return False

    def delete(self, *args: Any, **kwargs: Any) -> bool:
        try:
            return super().delete(*args, **kwargs)
        except UNREACHABLE as error:
            _unreachable("delete", error)
            return False

    def delete_many(self, *args: Any, **kwargs: Any) -> None:
        try:
            super().delete_many(*args, **kwargs)
        except UNREACHABLE as error:
            _unreachable("delete_many", error)

    def incr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        try:
            return super().incr(key, delta, version)
        except UNREACHABLE as error:  # as for a key that is not there
            _unreachable("incr", error)
            raise ValueError(f"Key {key!r} not found (the cache is unreachable)") from error
