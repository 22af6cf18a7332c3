"""Call a model, failing back within its family, within the daily token budget, and
write one LedgerEntry per attempt (ledger.models.LedgerEntry.Outcome says how rows read).

For each model in the chain (the requested one, then its failbacks):
- breaker open: a `breaker_open` row, straight on to the next model;
- the run's deadline passed: DeadlineExceeded, nothing sent, no row;
- the daily budget grants no reservation: BudgetSpent, nothing sent, no row;
- the call succeeds: an `ok` row (`failback` when a failback model served it); done;
- a retryable error (timeout, connection, 429, 5xx): a `timeout` / `http_error` row,
  then on to the next model, or the error is raised when none is left;
- the gateway names the model as unknown or retired (ModelUnavailable): the same, and
  the model's breaker opens for BREAKER_RETIRED_COOLDOWN_SECONDS and it is marked
  unavailable (ledger.availability) until it serves a call again;
- any other error (401/403, context overflow, invalid output): its row, raised at once.
Earlier exchanges of one attempt (a rejected JSON schema, an invalid reply before its
repair) get rows of their own, so the ledger holds every request that was sent.

Every attempt reserves BUDGET_RESERVATION_TOKENS of the day's budget before it is
sent and settles to the tokens its rows record after they are written (ledger.budget).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Generic, TypeVar

import httpx
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from pydantic import BaseModel

from ledger import availability, budget
from ledger.models import LedgerEntry
from ledger.rates import price_micros, rate_for
from reviews.llm import context
from reviews.llm.breaker import Breaker, Decision
from reviews.llm.client import Completion, Gateway
from reviews.llm.errors import (
    BreakerOpen,
    BudgetSpent,
    DeadlineExceeded,
    LLMError,
    ModelUnavailable,
    Outcome,
    StructuredOutputError,
    Usage,
)
from reviews.models import ReviewRun

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class ChainResult(Generic[T]):
    data: T
    model_requested: str  # the agent's model, first in the chain
    model_served: str  # as the gateway named it; a failback model after a failback


def failback_models(model: str, chain: dict[str, str | None] | None = None) -> list[str]:
    """`model` and its failbacks in order, each once."""
    chain = settings.LLM_FAILBACK_CHAIN if chain is None else chain
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
            served_outcome = Outcome.OK if position == 0 else Outcome.FAILBACK
            ledger = _Attempt(run_id, agent, model, candidate, served_outcome)
            breaker = Breaker(candidate)
            decision = breaker.allow()
            if decision is Decision.REJECT:
                ledger(None, Usage(), 0, Outcome.BREAKER_OPEN)
                last_error = BreakerOpen(f"breaker open for {candidate}")
                logger.warning("%s: breaker open for %s; skipping it", agent, candidate)
                continue
            try:
                timeout = _time_left(deadline_at, gateway.timeout)
                # The run's own reservation first: made when it was served fresh.
                reservation = (budget.draw_from_run(run_id) if run_id else None) or (
                    budget.reserve()
                )
                if reservation is None:
                    raise BudgetSpent("daily token budget spent")
            except LLMError:
                breaker.release(decision)
                raise
            try:
                completion = _attempt(gateway, breaker, decision, ledger, messages, schema, timeout)
            except LLMError as error:
                has_next = position + 1 < len(models)
                then = (
                    f"; failing back to {models[position + 1]}"
                    if error.failback and has_next
                    else ""
                )
                logger.warning(
                    "%s: %s failed (%s: %s)%s", agent, candidate, type(error).__name__, error, then
                )
                if not error.failback:
                    raise
                last_error = error
                continue
            finally:
                # After the rows are written: were the counter rebuilt meanwhile, the
                # ledger would already hold this attempt.
                budget.settle(reservation, ledger.tokens)
            return ChainResult(completion.data, model, completion.model_served)
    assert last_error is not None  # the loop ran at least once
    raise last_error


def _attempt(
    gateway: Gateway,
    breaker: Breaker,
    decision: Decision,
    ledger: _Attempt,
    messages: list[dict],
    schema: type[T],
    timeout: float,
) -> Completion[T]:
    """One model's attempt: its rows written, its breaker told how it went."""
    started = time.monotonic()
    try:
        completion = gateway.complete(
            ledger.candidate,
            messages,
            schema,
            timeout=timeout,
            on_attempt=ledger,
            on_send=ledger.sending,
        )
    except LLMError as error:
        _quietly(_settle, breaker, decision, error)
        if isinstance(error, ModelUnavailable):
            availability.mark_unavailable(ledger.candidate, str(error))
        ledger(error.model_served, error.usage, error.latency_ms, error.outcome)
        raise
    except SoftTimeLimitExceeded:
        # The task's soft limit cut the call short: still an attempt to account for.
        _quietly(breaker.release, decision)
        ledger(None, Usage(), int((time.monotonic() - started) * 1000), Outcome.TIMEOUT)
        raise
    _quietly(breaker.record_success, decision)
    availability.mark_available(ledger.candidate)
    ledger(completion.model_served, completion.usage, completion.latency_ms, ledger.served_outcome)
    return completion


def _quietly(tell, *args) -> None:
    """Tell the breaker how a call went, if its store (Redis) is there: a call made and
    paid for keeps its ledger row and its result when Redis restarts meanwhile."""
    try:
        tell(*args)
    except Exception as error:
        logger.warning("breaker state not updated (%r); the call's result stands", error)


class _Attempt:
    """Writes the rows of one model's attempt and adds up their tokens for the budget:
    the client's on_send hook writes a `pending` row before each request is sent (with
    the tokens it sends, estimated), its on_attempt hook settles it, and the attempt's
    last row is settled by one more call. A worker killed mid-call leaves the pending
    row, which the sweep marks `lost` (ledger.pending): every call sent is counted."""

    def __init__(
        self, run_id: int | None, agent: str, requested: str, candidate: str, served_outcome: str
    ) -> None:
        self.run_id, self.agent = run_id, agent
        self.requested, self.candidate = requested, candidate
        self.served_outcome = served_outcome
        self.tokens = 0
        self.open_row: int | None = None  # the pending row of the exchange under way

    def sending(self, messages: list[dict]) -> None:
        sent = Usage(prompt_tokens=estimate_tokens(messages))
        self.open_row = record(
            self.run_id, self.agent, self.requested, None, sent, 0, LedgerEntry.Outcome.PENDING,
            priced_as=self.candidate,
        ).pk  # fmt: skip

    def __call__(self, served: str | None, usage: Usage, latency_ms: int, outcome: str) -> None:
        row, self.open_row = self.open_row, None
        if row is not None:
            settle_row(row, self.candidate, served, usage, latency_ms, outcome)
            self.tokens += usage.prompt_tokens + usage.completion_tokens
            return
        record(
            self.run_id,
            self.agent,
            self.requested,
            served,
            usage,
            latency_ms,
            outcome,
            priced_as=self.candidate,
        )
        self.tokens += usage.prompt_tokens + usage.completion_tokens


def record(
    run_id: int | None,
    agent: str,
    model_requested: str,
    model_served: str | None,
    usage: Usage,
    latency_ms: int,
    outcome: str,
    *,
    priced_as: str | None = None,
) -> LedgerEntry:
    """One ledger row, priced at the served model's rate, else at the rate of the model
    the attempt called (`priced_as`, by default the requested one), which the row names
    as `model_attempted`."""
    attempted = priced_as or model_requested
    priced = model_served if model_served and rate_for(model_served) else attempted
    return LedgerEntry.objects.create(
        run_id=run_id,
        # The run's workspace (spend by workspace); a call without a run: the default.
        **_workspace_of(run_id),
        agent=agent,
        model_requested=model_requested,
        model_attempted=attempted,
        model=model_served,
        input_tokens=usage.prompt_tokens,
        cached_tokens=usage.cached_tokens,
        output_tokens=usage.completion_tokens,
        cost_micros=price_micros(
            priced, usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens
        ),
        gateway_cost_micros=usage.gateway_cost_micros,
        latency_ms=latency_ms,
        outcome=outcome,
    )


def _workspace_of(run_id: int | None) -> dict:
    workspace_id = (
        ReviewRun.objects.filter(pk=run_id).values_list("batch__workspace_id", flat=True).first()
        if run_id is not None
        else None
    )
    return {} if workspace_id is None else {"workspace_id": workspace_id}


def settle_row(
    row: int,
    attempted: str,
    model_served: str | None,
    usage: Usage,
    latency_ms: int,
    outcome: str,
) -> None:
    """The pending row of an exchange, settled with what the gateway reported."""
    priced = model_served if model_served and rate_for(model_served) else attempted
    LedgerEntry.objects.filter(pk=row).update(
        model=model_served,
        input_tokens=usage.prompt_tokens,
        cached_tokens=usage.cached_tokens,
        output_tokens=usage.completion_tokens,
        cost_micros=price_micros(
            priced, usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens
        ),
        gateway_cost_micros=usage.gateway_cost_micros,
        latency_ms=latency_ms,
        outcome=outcome,
    )


def estimate_tokens(messages: list[dict]) -> int:
    """What a request sends, estimated as the token budget estimates it."""
    return sum(context.estimate_tokens(str(m.get("content") or "")) for m in messages)


def _settle(breaker: Breaker, decision: Decision, error: LLMError) -> None:
    if isinstance(error, ModelUnavailable):
        cooldown = int(settings.BREAKER_RETIRED_COOLDOWN_SECONDS)
        breaker.open_for(cooldown, "the gateway says the model is unavailable")
    elif error.failback:
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
