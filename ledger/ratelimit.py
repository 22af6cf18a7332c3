"""Per-client rate limit: review requests per hour, counted for each of a request's
keys against the key's limit: RATE_LIMIT_PER_HOUR for a user or an address,
RATE_LIMIT_PER_WORKSPACE_PER_HOUR for a workspace (shared by all its members); the key
furthest over its limit decides. A signed-in request counts against its user and the
workspace it acts in (rate_keys(), with_workspace()), never its address: a team behind
one office NAT or VPN shares an address, not a limit. Only an anonymous request counts
against its address. The dashboard, the admin and the API pass the same keys, so a user
past the limit on one path is past it on the others, and so is a workspace whichever of
its members asks.

The keys are plain strings: reading them off a web request (the user, the client
address behind proxies) is the web layer's (reviews/web/client_address.py).

A fixed window (the clock hour, UTC): one counter per key and hour, INCR and EXPIRE in
one MULTI. Simple and atomic; the price is that a client can send up to twice the
limit across an hour boundary, which is acceptable for a cost guard.

Just over the limit (up to HARD_FACTOR x limit) a request is served by failback; beyond
that it is refused with 429 and Retry-After (reviews.orchestration.serving.decide decides).

Embedded mode (REDIS_URL empty): the same counters in Django's cache, which there is
the per-process local-memory cache: the web process limits its clients; CLI runs are
not rate limited at all (they pass no keys). If Redis is unreachable the
request is allowed (fail open, logged): the daily budget still caps the spend.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

import redis
from django.conf import settings
from django.core.cache import cache

from ledger.redis_client import KEY_PREFIX, get_client

logger = logging.getLogger(__name__)

HARD_FACTOR = 2  # over HARD_FACTOR x limit: refused with 429, not served by failback
WINDOW_SECONDS = 3600


@dataclass(frozen=True, slots=True)
class RateDecision:
    allowed: bool
    count: int  # requests of the key furthest over in this window, this one included
    limit: int  # 0 = unlimited
    retry_after: int  # seconds until the window resets

    @property
    def over_by(self) -> int:
        return max(0, self.count - self.limit) if self.limit else 0

    @property
    def far_over(self) -> bool:
        return bool(self.limit) and self.count > HARD_FACTOR * self.limit


WORKSPACE_FACTOR = 10  # RATE_LIMIT_PER_WORKSPACE_PER_HOUR unset: 10 x RATE_LIMIT_PER_HOUR
WORKSPACE_PREFIX = "workspace:"


def limit_per_hour() -> int:
    return int(settings.RATE_LIMIT_PER_HOUR)


def workspace_limit_per_hour() -> int:
    """The limit of one workspace, all its members together; unset (None): WORKSPACE_FACTOR
    x the per-user limit (so 0 there leaves workspaces unlimited too)."""
    configured = getattr(settings, "RATE_LIMIT_PER_WORKSPACE_PER_HOUR", None)
    if configured is None:
        return WORKSPACE_FACTOR * limit_per_hour()
    return int(configured)


def limit_of(key: str) -> int:
    return workspace_limit_per_hour() if key.startswith(WORKSPACE_PREFIX) else limit_per_hour()


def rate_keys(user_id: int | None, address: str | None) -> list[str]:
    """What one review request counts against: its user if signed in, else its address.
    The same for every path a request takes (page, admin, API); serving adds the
    workspace (with_workspace)."""
    if user_id is not None:
        return [f"user:{user_id}"]
    return [f"ip:{address}"] if address else []


def with_workspace(keys: list[str] | None, workspace_id: int | None) -> list[str] | None:
    """`keys` and the workspace the request acts in (its batch's). Added where the request
    is served (reviews.orchestration.serving.decide), so every path counts it, requests queued or
    spooled with only a user and an address among them."""
    if not keys or workspace_id is None:
        return keys
    key = f"{WORKSPACE_PREFIX}{workspace_id}"
    return keys if key in keys else [*keys, key]


def hit(*keys: str, now: float | None = None) -> RateDecision:
    """Count one request against each of `keys` and say whether it is within the limit:
    the decision of the key furthest over its own limit (limit_of) this window. A key
    whose limit is 0 (unlimited) is not counted."""
    now = time.time() if now is None else now
    window = int(now // WINDOW_SECONDS)
    retry_after = max(1, (window + 1) * WINDOW_SECONDS - int(now))
    limited = [(key, limit) for key in keys if (limit := limit_of(key)) > 0]
    if not limited:
        return RateDecision(allowed=True, count=0, limit=0, retry_after=retry_after)
    try:
        counts = _incr([f"{KEY_PREFIX}rate:{key}:{window}" for key, _ in limited])
    except redis.RedisError as error:
        logger.warning("rate limit counter unavailable, allowing %s: %r", keys, error)
        limit = min(limit for _, limit in limited)
        return RateDecision(allowed=True, count=0, limit=limit, retry_after=retry_after)
    pairs = zip(counts, (limit for _, limit in limited), strict=True)
    count, limit = max(pairs, key=lambda pair: pair[0] / pair[1])
    return RateDecision(allowed=count <= limit, count=count, limit=limit, retry_after=retry_after)


def _incr(keys: Sequence[str]) -> list[int]:
    ttl = WINDOW_SECONDS + 60
    client = get_client()
    if client is not None:
        with client.pipeline(transaction=True) as pipe:
            for key in keys:
                pipe.incr(key)
                pipe.expire(key, ttl)
            replies = pipe.execute()
        return [int(count) for count in replies[::2]]
    return [_incr_cache(key, ttl) for key in keys]


def _incr_cache(key: str, ttl: int) -> int:
    cache.add(key, 0, timeout=ttl)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 0, timeout=ttl)
        return cache.incr(key)


def legacy_rate_keys(identity: str | None) -> list[str] | None:
    """The keys of a request recorded before rate_keys (an upload spooled, a task
    queued): it had one identity, an API user (`user:<id>`) or an address."""
    if not identity:
        return None
    return [identity] if identity.startswith("user:") else [f"ip:{identity}"]
