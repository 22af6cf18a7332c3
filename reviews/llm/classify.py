"""What a gateway's failed answer means (errors.py's classes), by its HTTP status and
the words of its body, as OpenRouter, LiteLLM, Google, Ollama and OpenAI write them."""

from __future__ import annotations

from collections.abc import Callable

from reviews.llm.errors import (
    AuthFailed,
    BadRequest,
    ContextOverflow,
    LLMError,
    ModelUnavailable,
    ProviderUnavailable,
    RateLimited,
    SchemaUnsupported,
    Usage,
)

# Words providers use when a prompt does not fit the model's context window.
_CONTEXT_MARKERS = (
    "context_length",
    "context length",
    "maximum context",
    "context window",
    "too many tokens",
    "prompt is too long",
)
# How gateways say a model id is unknown, misspelt or retired (lower-cased), as their
# 400 / 404 bodies read (see tests/llm/test_model_unavailable.py for the bodies):
# OpenRouter "X is not a valid model ID" (400) and "No endpoints found for X" (404);
# LiteLLM "Invalid model name passed in model=X" (400); Google's OpenAI-compatible
# endpoint "models/X is not found for API version v1main" (404, NOT_FOUND); Ollama
# 'model "X" not found, try pulling it first' (404); OpenAI "The model `X` does not
# exist" (404, model_not_found); retirement notices ("no longer available",
# "decommissioned", "retired"). Not "deprecated": a 400 about a deprecated parameter
# names the model too, and the next model would be sent the same parameter.
_UNAVAILABLE_MARKERS = (
    "not a valid model",
    "invalid model",
    "model_not_found",
    "no endpoints found",
    "is not found for api version",
    "unknown model",
)
# Words that say the same only when the body is about a model (a wrong base URL's 404
# "does not exist" is not).
_UNAVAILABLE_WORDS = (
    "not found",
    "not_found",
    "does not exist",
    "no longer available",
    "decommissioned",
    "retired",
)
_UNAVAILABLE_STATUSES = (400, 404, 410)


def classify(
    status: int,
    text: str,
    used_schema: bool,
    latency_ms: int,
    usage: Usage | None = None,
    *,
    redact: Callable[[str], str],
) -> LLMError:
    """The LLMError of a gateway's failed answer (an HTTP status, or a 200 carrying only
    an `error`), by its status and the words of its body; `redact` keeps the key out of
    the message."""
    message = redact(f"HTTP {status}: {text[:300]}")
    lowered = text.lower()
    kind: type[LLMError]
    if status in (401, 403):
        kind = AuthFailed
    elif status == 429:
        kind = RateLimited
    elif status >= 500 or status == 408:
        kind = ProviderUnavailable
    elif _names_model_unavailable(status, lowered):
        kind = ModelUnavailable
    elif status == 413 or any(marker in lowered for marker in _CONTEXT_MARKERS):
        kind = ContextOverflow
    elif used_schema and ("json_schema" in lowered or "response_format" in lowered):
        kind = SchemaUnsupported
    else:
        kind = BadRequest
    return kind(message, usage=usage, latency_ms=latency_ms)


def _names_model_unavailable(status: int, lowered_body: str) -> bool:
    """A 400/404/410 whose body says the model id is unknown or retired. A bare 404
    (a wrong base URL, say) is not one: the next model would get the same answer."""
    if status not in _UNAVAILABLE_STATUSES:
        return False
    if any(marker in lowered_body for marker in _UNAVAILABLE_MARKERS):
        return True
    return "model" in lowered_body and any(word in lowered_body for word in _UNAVAILABLE_WORDS)
