"""Call a model, failing back within its family, and write one LedgerEntry per attempt.

For each model in the chain (the requested one, then its failbacks):
- breaker open: a `breaker_open` row, straight on to the next model;
- the call succeeds: an `ok` row with the served model, tokens and cost; done;
- a retryable error (timeout, connection, 429, 5xx) with a next model to try: a
  `failback` row, on to the next model; with none left: a `timeout` / `http_error`
  row and the error is raised;
- any other error (401/403, context overflow, invalid output): its row, raised at once.
Earlier exchanges of one attempt (a rejected JSON schema, an invalid reply before its
repair) get rows of their own, so the ledger holds every request that was sent.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from functools import partial
from typing import Generic, TypeVar

import httpx
from celery.exceptions import SoftTimeLimitExceeded
from pydantic import BaseModel

from ledger.models import LedgerEntry
from ledger.rates import price_micros, rate_for
from reviews.llm.breaker import Breaker, Decision
from reviews.llm.client import Gateway
from reviews.llm.config import setting
from reviews.llm.errors import (
    BreakerOpen,
    DeadlineExceeded,
    LLMError,
    Outcome,
    StructuredOutputError,
    Usage,
)

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class ChainResult(Generic[T]):
    data: T
    model_requested: str  # the agent's model, first in the chain
    model_served: str  # as the gateway named it; a failback model after a failback


def failback_models(model: str, chain: dict[str, str | None] | None = None) -> list[str]:
    """`model` and its failbacks in order, each once."""
    chain = setting("LLM_FAILBACK_CHAIN") if chain is None else chain
    models = [model]
    while (nxt := chain.get(models[-1])) and nxt not in models:
        models.append(nxt)
    return models


def call_with_failback(
    agent: str,
    model: str,
    messages: list[dict],
    schema: type[T],
    *,
    run_id: int | None = None,
    deadline_at: float | None = None,
    transport: httpx.BaseTransport | None = None,
) -> ChainResult[T]:
    """The validated reply of the first model in the chain that gives one. Raises the
    last LLMError when none does. `deadline_at` (epoch seconds) is the run's deadline:
    no call starts after it, and none is given longer than what is left of it."""
    models = failback_models(model)
    last_error: LLMError | None = None
    with Gateway.from_settings(transport=transport) as gateway:
        for position, candidate in enumerate(models):
            has_next = position + 1 < len(models)
            # One ledger row: (model served, usage, latency_ms, outcome).
            ledger = partial(record, run_id, agent, candidate)
            breaker = Breaker(candidate)
            decision = breaker.allow()
            if decision is Decision.REJECT:
                ledger(None, Usage(), 0, Outcome.BREAKER_OPEN)
                last_error = BreakerOpen(f"breaker open for {candidate}")
                logger.warning("%s: breaker open for %s; skipping it", agent, candidate)
                continue
            try:
                timeout = _time_left(deadline_at, gateway.timeout)
            except DeadlineExceeded:
                breaker.release(decision)
                raise
            started = time.monotonic()
            try:
                completion = gateway.complete(
                    candidate, messages, schema, timeout=timeout, on_attempt=ledger
                )
            except LLMError as error:
                _settle(breaker, decision, error)
                failing_back = error.failback and has_next
                outcome = Outcome.FAILBACK if failing_back else error.outcome
                ledger(error.model_served, error.usage, error.latency_ms, outcome)
                then = f"; failing back to {models[position + 1]}" if failing_back else ""
                logger.warning(
                    "%s: %s failed (%s: %s)%s", agent, candidate, type(error).__name__, error, then
                )
                if not error.failback:
                    raise
                last_error = error
                continue
            except SoftTimeLimitExceeded:
                # The task's soft limit cut the call short: still an attempt to account for.
                breaker.release(decision)
                ledger(None, Usage(), int((time.monotonic() - started) * 1000), Outcome.TIMEOUT)
                raise
            breaker.record_success(decision)
            ledger(completion.model_served, completion.usage, completion.latency_ms, Outcome.OK)
            return ChainResult(completion.data, model, completion.model_served)
    assert last_error is not None  # the loop ran at least once
    raise last_error


def record(
    run_id: int | None,
    agent: str,
    model_requested: str,
    model_served: str | None,
    usage: Usage,
    latency_ms: int,
    outcome: str,
) -> LedgerEntry:
    """One ledger row, priced at the served model's rate (else the requested one's)."""
    priced = model_served if model_served and rate_for(model_served) else model_requested
    return LedgerEntry.objects.create(
        run_id=run_id,
        agent=agent,
        model_requested=model_requested,
        model=model_served,
        input_tokens=usage.prompt_tokens,
        cached_tokens=usage.cached_tokens,
        output_tokens=usage.completion_tokens,
        cost_micros=price_micros(
            priced, usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens
        ),
        latency_ms=latency_ms,
        outcome=outcome,
    )


def _settle(breaker: Breaker, decision: Decision, error: LLMError) -> None:
    if error.failback:
        breaker.record_failure(decision)
    elif isinstance(error, StructuredOutputError):
        breaker.record_success(decision)  # it answered: the model is up
    else:
        breaker.release(decision)  # a bad key or request says nothing of the model


def _time_left(deadline_at: float | None, timeout: float) -> float:
    if deadline_at is None:
        return timeout
    left = deadline_at - time.time()
    if left <= 0:
        raise DeadlineExceeded("the run's deadline has passed")
    return min(timeout, left)
