"""A circuit breaker per model, shared by every worker (DESIGN principle 4).

closed --(BREAKER_FAILURE_THRESHOLD failures within the cooldown)--> open
open --(BREAKER_COOLDOWN_SECONDS pass)--> half-open: exactly one caller gets the probe
half-open --probe succeeds--> closed;  --probe fails--> open again

State lives in Django's default cache, which settings.py points at Redis whenever
REDIS_URL is set, so all workers share one breaker per model. In the embedded mode
(no REDIS_URL) that cache is per process, and so is each breaker.

Three keys per model, no read-modify-write of a shared value:
- `open`: exists while the breaker is open; its expiry is the cooldown, kept by Redis.
- `tripped`: set when the breaker opens, deleted when it closes. `tripped` without
  `open` is half-open.
- `probe`: taken with an atomic add (Redis SET NX): the one caller that gets it probes.
  It expires, so a probe whose worker died is retried after PROBE_GRACE_SECONDS more
  than the call timeout.
Failures are counted with an atomic INCR on a key that expires with the cooldown.
"""

from __future__ import annotations

import logging
from enum import StrEnum

from django.conf import settings
from django.core.cache import cache as default_cache

logger = logging.getLogger(__name__)

PROBE_GRACE_SECONDS = 10
# A breaker nobody probes (the model went unused) forgets its trip after a day.
TRIPPED_SECONDS = 24 * 3600


class State(StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class Decision(StrEnum):
    CALL = "call"  # closed: go ahead
    PROBE = "probe"  # half-open, and this caller is the one probe
    REJECT = "reject"  # open, or half-open with the probe already out


class Breaker:
    def __init__(self, model: str, *, cache=None) -> None:
        self.model = model
        self.cache = cache or default_cache
        self.threshold = int(settings.BREAKER_FAILURE_THRESHOLD)
        self.cooldown = int(settings.BREAKER_COOLDOWN_SECONDS)
        self.probe_ttl = int(settings.LLM_TIMEOUT_SECONDS) + PROBE_GRACE_SECONDS
        prefix = f"llm-breaker:{model}"
        self._open = f"{prefix}:open"
        self._tripped = f"{prefix}:tripped"
        self._probe = f"{prefix}:probe"
        self._failures = f"{prefix}:failures"

    def state(self) -> State:
        values = self.cache.get_many([self._open, self._tripped])
        if self._open in values:
            return State.OPEN
        if self._tripped in values:
            return State.HALF_OPEN
        return State.CLOSED

    def allow(self) -> Decision:
        state = self.state()
        if state is State.CLOSED:
            return Decision.CALL
        if state is State.HALF_OPEN and self.cache.add(self._probe, 1, self.probe_ttl):
            logger.info("breaker for %s half-open: probing", self.model)
            return Decision.PROBE
        return Decision.REJECT

    def record_success(self, decision: Decision) -> None:
        """Close after a successful probe; reset the failure count when closed. A late
        success of a call started before the trip does not cut the cooldown short."""
        if decision is Decision.PROBE:
            self.reset()
            logger.info("breaker for %s closed: the probe succeeded", self.model)
        elif self.state() is State.CLOSED:
            self.cache.delete(self._failures)

    def record_failure(self, decision: Decision) -> None:
        if decision is Decision.PROBE:
            self._trip("the probe failed")
            return
        if self.state() is not State.CLOSED:
            return  # a call started before the trip: the probe decides, not it
        self.cache.add(self._failures, 0, self.cooldown)
        try:
            failures = self.cache.incr(self._failures)
        except ValueError:  # the count expired between add and incr: start again
            self.cache.add(self._failures, 1, self.cooldown)
            failures = 1
        if failures >= self.threshold:
            self._trip(f"{failures} failures")

    def release(self, decision: Decision) -> None:
        """The call ended without telling whether the model is healthy (a bad key, a
        prompt too long): let the next caller probe instead."""
        if decision is Decision.PROBE:
            self.cache.delete(self._probe)

    def open_for(self, seconds: int, why: str) -> None:
        """Open now for `seconds`, whatever the count: the gateway said the model is
        gone (reviews.llm.errors.ModelUnavailable), so retrying it soon is waste."""
        self._trip(why, seconds)

    def reset(self) -> None:
        """Forget this breaker's state: closed, no failures counted."""
        self.cache.delete_many([self._tripped, self._open, self._probe, self._failures])

    def _trip(self, why: str, cooldown: int | None = None) -> None:
        cooldown = self.cooldown if cooldown is None else cooldown
        # `open` before `tripped`: in between, callers see open, never a free probe.
        self.cache.set(self._open, 1, cooldown)
        # `tripped` outlives `open`, so the half-open probe follows any cooldown.
        self.cache.set(self._tripped, 1, cooldown + TRIPPED_SECONDS)
        self.cache.delete_many([self._failures, self._probe])
        logger.warning("breaker for %s open for %ss: %s", self.model, cooldown, why)
