"""Per-client rate limit: review requests per client address per hour.

A fixed window (the clock hour, UTC): one counter per address and hour, INCR and EXPIRE
in one MULTI. Simple and atomic; the price is that a client can send up to twice the
limit across an hour boundary, which is acceptable for a cost guard.

Just over the limit (up to HARD_FACTOR x limit) a request is served by failback; beyond
that it is refused with 429 and Retry-After (reviews.orchestration.serving decides).

Embedded mode (REDIS_URL empty): the same counters in Django's cache, which there is
the per-process local-memory cache: the web process limits its clients; CLI runs are
not rate limited at all (they have no client address). If Redis is unreachable the
request is allowed (fail open, logged): the daily budget still caps the spend.
"""

from __future__ import annotations

import ipaddress
import logging
import time
from dataclasses import dataclass

import redis
from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

from ledger.redis_client import KEY_PREFIX, get_client

logger = logging.getLogger(__name__)

HARD_FACTOR = 2  # over HARD_FACTOR x limit: refused with 429, not served by failback
WINDOW_SECONDS = 3600


@dataclass(frozen=True, slots=True)
class RateDecision:
    allowed: bool
    count: int  # requests from this address in the current window, this one included
    limit: int  # 0 = unlimited
    retry_after: int  # seconds until the window resets

    @property
    def over_by(self) -> int:
        return max(0, self.count - self.limit) if self.limit else 0

    @property
    def far_over(self) -> bool:
        return bool(self.limit) and self.count > HARD_FACTOR * self.limit


def limit_per_hour() -> int:
    return int(settings.RATE_LIMIT_PER_HOUR)


def hit(ip: str, *, now: float | None = None) -> RateDecision:
    """Count one request from `ip` and say whether it is within the limit."""
    now = time.time() if now is None else now
    window = int(now // WINDOW_SECONDS)
    retry_after = max(1, (window + 1) * WINDOW_SECONDS - int(now))
    limit = limit_per_hour()
    if limit <= 0:
        return RateDecision(allowed=True, count=0, limit=0, retry_after=retry_after)
    key = f"{KEY_PREFIX}rate:{ip}:{window}"
    try:
        count = _incr(key)
    except redis.RedisError as error:
        logger.warning("rate limit counter unavailable, allowing %s: %r", ip, error)
        return RateDecision(allowed=True, count=0, limit=limit, retry_after=retry_after)
    return RateDecision(allowed=count <= limit, count=count, limit=limit, retry_after=retry_after)


def _incr(key: str) -> int:
    ttl = WINDOW_SECONDS + 60
    client = get_client()
    if client is not None:
        with client.pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.expire(key, ttl)
            count, _ = pipe.execute()
        return int(count)
    cache.add(key, 0, timeout=ttl)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 0, timeout=ttl)
        return cache.incr(key)


def client_ip(request: HttpRequest) -> str:
    """The client's address. TRUSTED_PROXY_COUNT = 0: REMOTE_ADDR. n > 0: the n-th
    address from the right of X-Forwarded-For, the one our outermost trusted proxy saw
    (addresses further left are whatever the client claims). A header with fewer
    entries means fewer proxies were passed: its leftmost entry is then the one a
    trusted proxy wrote. A missing or malformed header falls back to REMOTE_ADDR."""
    remote = request.META.get("REMOTE_ADDR", "")
    proxies = int(settings.TRUSTED_PROXY_COUNT)
    if proxies <= 0:
        return remote
    forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    forwarded = [a for a in forwarded if a]
    if not forwarded:
        return remote
    candidate = forwarded[-proxies] if len(forwarded) >= proxies else forwarded[0]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return remote
