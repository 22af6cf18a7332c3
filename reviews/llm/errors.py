"""What can go wrong with a model call, classified once (DESIGN principle 4).

`failback` says whether trying the next model in the family can help: an overloaded or
unreachable provider, yes; a bad key, a prompt too long or a reply that is not the
JSON asked for, no (the next model would get the same request). `outcome` is the
ledger outcome of the attempt that raised it."""

from __future__ import annotations

from dataclasses import dataclass

from ledger.models import LedgerEntry

Outcome = LedgerEntry.Outcome


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens of one exchange. `prompt_tokens` includes the cached ones (OpenAI's
    convention, which OpenRouter and LiteLLM follow)."""

    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    # What the gateway says the call cost (OpenRouter's `usage.cost`), in micro-dollars;
    # None when it does not say. Kept beside our own price, never instead of it.
    gateway_cost_micros: int | None = None


class LLMError(Exception):
    failback = False
    outcome = Outcome.HTTP_ERROR

    def __init__(
        self,
        message: str,
        *,
        usage: Usage | None = None,
        latency_ms: int = 0,
        model_served: str | None = None,
    ) -> None:
        super().__init__(message)
        self.usage = usage or Usage()
        self.latency_ms = latency_ms
        self.model_served = model_served


class CallTimeout(LLMError):
    failback = True
    outcome = Outcome.TIMEOUT


class ConnectionFailed(LLMError):
    failback = True


class RateLimited(LLMError):
    failback = True


class ProviderUnavailable(LLMError):
    """5xx, or a reply that is not an OpenAI-shaped JSON body."""

    failback = True


class ModelUnavailable(LLMError):
    """The gateway names the model as unknown, invalid, not found or retired (a 400 or
    404 in its own words). The next model in the family may well be served, so this
    fails back; the model's breaker opens for BREAKER_RETIRED_COOLDOWN_SECONDS and the
    model is marked unavailable (ledger.availability) until it serves again."""

    failback = True


class BreakerOpen(LLMError):
    failback = True
    outcome = Outcome.BREAKER_OPEN


class AuthFailed(LLMError):
    pass


class ContextOverflow(LLMError):
    pass


class BadRequest(LLMError):
    pass


class SchemaUnsupported(BadRequest):
    """The provider rejected response_format=json_schema: ask again in JSON mode."""


class StructuredOutputError(LLMError):
    outcome = Outcome.INVALID_OUTPUT


class DeadlineExceeded(LLMError):
    """The run's deadline has passed: no call is started, the run goes on without it."""

    outcome = Outcome.TIMEOUT


class BudgetSpent(LLMError):
    """The daily token budget granted no reservation: no call is started (and so no
    ledger row is written). The next model would need budget too: no failback."""
