"""One OpenAI-compatible gateway over httpx: POST {base}/chat/completions, structured
output through response_format, validated with pydantic.

Works with OpenRouter, LiteLLM, vLLM, Ollama and AI gateways: only the chat-completions
request and reply shapes are assumed. Every HTTP exchange is reported, so the caller
can write one ledger row per attempt: the last through the Completion or the raised
LLMError, the earlier ones (a JSON-schema rejection, a reply before its repair)
through `on_attempt`."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any, Generic, TypeVar

import httpx
from django.conf import settings
from pydantic import BaseModel, ValidationError

from reviews.llm.errors import (
    AuthFailed,
    BadRequest,
    CallTimeout,
    ConnectionFailed,
    ContextOverflow,
    LLMError,
    ModelUnavailable,
    Outcome,
    ProviderUnavailable,
    RateLimited,
    SchemaUnsupported,
    StructuredOutputError,
    Usage,
)

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

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
# A gateway's cost above this many USD for one call is not believed (a garbled number).
_MAX_GATEWAY_COST_USD = Decimal(10_000)
_MAX_INT_DIGITS = 30  # any real token count or cost fits
_BAD_REPLY_CHARS = 4000  # of an invalid reply echoed back for its repair
REPAIR_PROMPT = (
    "Your reply was not valid for the required JSON format: {problem}\n"
    "Reply again with only the JSON object, nothing before or after it."
)

# (base URL, model) pairs whose provider rejected json_schema: JSON mode from then on.
_NO_JSON_SCHEMA: set[tuple[str, str]] = set()


@dataclass(frozen=True, slots=True)
class Exchange:
    model_served: str
    content: str
    usage: Usage
    latency_ms: int


@dataclass(frozen=True, slots=True)
class Completion(Generic[T]):
    data: T
    model_served: str
    usage: Usage
    latency_ms: int


# on_attempt(model_served, usage, latency_ms, outcome) for an exchange that was not the last.
AttemptHook = Callable[[str | None, Usage, int, str], None]
# on_send(messages) just before each exchange is sent: its row is written before the call.
SendHook = Callable[[list[dict]], None]


class Gateway:
    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float,
        max_output_tokens: int,
        json_schema: bool = True,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.timeout = timeout
        self.max_output_tokens = max_output_tokens
        self.json_schema = json_schema
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # No kept-alive connections: each exchange opens its own, so its deadline knows
        # the socket to cut (a handshake is nothing beside a model call's seconds).
        self._http = httpx.Client(
            headers=headers,
            transport=transport,
            timeout=timeout,
            limits=httpx.Limits(max_keepalive_connections=0),
            follow_redirects=False,  # a redirect is an answer (BadRequest), never followed
        )

    @classmethod
    def from_settings(cls, transport: httpx.BaseTransport | None = None) -> Gateway:
        return cls(
            settings.LLM_BASE_URL,
            settings.LLM_API_KEY,
            timeout=float(settings.LLM_TIMEOUT_SECONDS),
            max_output_tokens=int(settings.LLM_MAX_OUTPUT_TOKENS),
            json_schema=bool(settings.LLM_JSON_SCHEMA),
            transport=transport,
        )

    def __enter__(self) -> Gateway:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def complete(
        self,
        model: str,
        messages: list[dict],
        schema: type[T],
        *,
        timeout: float | None = None,
        on_attempt: AttemptHook | None = None,
        on_send: SendHook | None = None,
    ) -> Completion[T]:
        """A reply validated against `schema`. JSON schema first, JSON mode where the
        provider lacks it; one repair request for an invalid reply, then
        StructuredOutputError. Other failures raise their LLMError."""
        report = on_attempt or (lambda *args: None)
        sending = on_send or (lambda messages: None)
        use_schema = self.json_schema and (self.base_url, model) not in _NO_JSON_SCHEMA
        try:
            sending(messages)
            exchange = self.exchange(model, messages, schema, use_schema, timeout)
        except SchemaUnsupported as error:
            report(None, error.usage, error.latency_ms, Outcome.HTTP_ERROR)
            logger.info("%s rejects json_schema; using JSON mode for it", model)
            _NO_JSON_SCHEMA.add((self.base_url, model))
            use_schema = False
            sending(messages)
            exchange = self.exchange(model, messages, schema, use_schema, timeout)

        data, problem = parse_reply(exchange.content, schema)
        if data is not None:
            return Completion(data, exchange.model_served, exchange.usage, exchange.latency_ms)

        report(exchange.model_served, exchange.usage, exchange.latency_ms, Outcome.INVALID_OUTPUT)
        logger.info("%s replied with invalid output (%s); asking once to repair", model, problem)
        repair = [
            *messages,
            {"role": "assistant", "content": exchange.content[:_BAD_REPLY_CHARS]},
            {"role": "user", "content": REPAIR_PROMPT.format(problem=problem)},
        ]
        sending(repair)
        exchange = self.exchange(model, repair, schema, use_schema, timeout)
        data, problem = parse_reply(exchange.content, schema)
        if data is None:
            raise StructuredOutputError(
                f"invalid output after one repair: {problem}",
                usage=exchange.usage,
                latency_ms=exchange.latency_ms,
                model_served=exchange.model_served,
            )
        return Completion(data, exchange.model_served, exchange.usage, exchange.latency_ms)

    def exchange(
        self,
        model: str,
        messages: list[dict],
        schema: type[BaseModel],
        use_schema: bool,
        timeout: float | None = None,
    ) -> Exchange:
        """One POST. Returns the reply's text and usage, or raises a classified LLMError."""
        body = {
            "model": model,
            "messages": messages if use_schema else _with_schema_hint(messages, schema),
            "max_tokens": self.max_output_tokens,
            "temperature": 0,
            "response_format": _response_format(schema) if use_schema else {"type": "json_object"},
        }
        started = time.monotonic()
        seconds = timeout or self.timeout
        try:
            with Deadline(seconds) as deadline:
                response = self._http.post(
                    f"{self.base_url}/chat/completions",
                    json=body,
                    timeout=seconds,
                    extensions={"trace": deadline.trace},
                )
        except httpx.TransportError as error:
            if isinstance(error, httpx.TimeoutException) or deadline.expired:
                raise CallTimeout(
                    f"no reply from {model} within {seconds:g}s", latency_ms=_since(started)
                ) from None
            raise ConnectionFailed(
                self._redact(f"{type(error).__name__}: {error}"), latency_ms=_since(started)
            ) from None
        latency_ms = _since(started)
        if not response.is_success:
            raise self._classify(response.status_code, response.text, use_schema, latency_ms)
        try:
            # Numbers too long for an int (Python refuses over 4,300 digits) are kept as
            # Decimal, which no usage field accepts: a garbled count, not a lost reply.
            payload = json.loads(response.content, parse_int=_parse_int)
        except ValueError:
            raise ProviderUnavailable(
                "the gateway's reply is not JSON", latency_ms=latency_ms
            ) from None
        return self._read(model, payload, latency_ms)

    def _read(self, model: str, payload: Any, latency_ms: int) -> Exchange:
        if not isinstance(payload, dict):
            raise ProviderUnavailable("the gateway's reply is not an object", latency_ms=latency_ms)
        usage = parse_usage(payload.get("usage"))
        choices = payload.get("choices")
        if not choices:
            # Some gateways answer 200 with only an `error` (an upstream failure).
            error = payload.get("error") if isinstance(payload.get("error"), dict) else {}
            code = error.get("code")
            status = code if isinstance(code, int) else 502
            raise self._classify(status, json.dumps(error)[:500], False, latency_ms, usage)
        first = choices[0] if isinstance(choices, list) else None
        message = first.get("message") if isinstance(first, dict) else None
        if not isinstance(message, dict):
            raise ProviderUnavailable(
                "the reply has no message", usage=usage, latency_ms=latency_ms
            )
        content = message.get("content") or ""
        served = payload.get("model") or model
        return Exchange(str(served), str(content), usage, latency_ms)

    def _classify(
        self,
        status: int,
        text: str,
        used_schema: bool,
        latency_ms: int,
        usage: Usage | None = None,
    ) -> LLMError:
        message = self._redact(f"HTTP {status}: {text[:300]}")
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

    def _redact(self, text: str) -> str:
        """Providers sometimes echo the key in an error; it must reach no log or page."""
        return text.replace(self._api_key, "[redacted]") if self._api_key else text


class Deadline:
    """One deadline for a whole exchange: connect, write and the read of the whole body.

    httpx's timeouts are per operation, so a gateway that trickles a byte every few
    seconds never trips one. This one shuts the exchange's socket down when its time is
    up, which ends a blocked read at once; `expired` tells the caller why it ended. The
    socket comes from httpx's trace hook as the connection opens (connect itself is
    bounded by the connect timeout, which is the same number of seconds)."""

    def __init__(self, seconds: float) -> None:
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self.expired = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._timer.cancel()

    def trace(self, event: str, info: dict) -> None:
        if event not in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            late = self.expired
        if late:
            _shutdown(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shutdown(sock)


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # closed already: nothing left to cut
        pass


def parse_usage(raw: Any) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    prompt = _count(raw.get("prompt_tokens"))
    details = raw.get("prompt_tokens_details")
    cached = _count(details.get("cached_tokens")) if isinstance(details, dict) else 0
    # LiteLLM passes through Anthropic-style cache reads under this name.
    cached = cached or _count(raw.get("cache_read_input_tokens"))
    return Usage(
        prompt,
        min(cached, prompt),
        _count(raw.get("completion_tokens")),
        gateway_cost_micros(raw.get("cost")),
    )


def gateway_cost_micros(value: Any) -> int | None:
    """OpenRouter's `usage.cost` (USD, a JSON number) in integer micro-dollars, or None
    when absent or not a believable amount (a string, negative, NaN, infinite, huge)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        usd = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    if not usd.is_finite() or usd < 0 or usd > _MAX_GATEWAY_COST_USD:
        return None
    return int((usd * 1_000_000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _names_model_unavailable(status: int, lowered_body: str) -> bool:
    """A 400/404/410 whose body says the model id is unknown or retired. A bare 404
    (a wrong base URL, say) is not one: the next model would get the same answer."""
    if status not in _UNAVAILABLE_STATUSES:
        return False
    if any(marker in lowered_body for marker in _UNAVAILABLE_MARKERS):
        return True
    return "model" in lowered_body and any(word in lowered_body for word in _UNAVAILABLE_WORDS)


def parse_reply(content: str, schema: type[T]) -> tuple[T | None, str]:
    """(the validated reply, "") or (None, what is wrong with it)."""
    text = _strip_fence(content)
    if not text:
        return None, "the reply is empty"
    try:
        return schema.model_validate_json(text), ""
    except ValidationError as error:
        problems = [
            f"{'.'.join(str(p) for p in e['loc']) or 'reply'}: {e['msg']}"
            for e in error.errors(include_url=False, include_input=False)[:5]
        ]
        return None, "; ".join(problems)


def _strip_fence(content: str) -> str:
    """Models in JSON mode sometimes wrap the object in a ```json fence anyway."""
    text = content.strip()
    if text.startswith("```") and text.endswith("```"):
        text = text[3:-3]
        if text.startswith("json"):
            text = text[4:]
    return text.strip()


def _response_format(schema: type[BaseModel]) -> dict:
    return {
        "type": "json_schema",
        # Not strict: strict mode rejects defaults, and pydantic validates anyway.
        "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema()},
    }


def _with_schema_hint(messages: list[dict], schema: type[BaseModel]) -> list[dict]:
    """JSON mode carries no schema: state it in the last message instead."""
    hint = "\n\nReply with one JSON object that matches this JSON Schema:\n" + json.dumps(
        schema.model_json_schema(), separators=(",", ":")
    )
    last = messages[-1]
    return [*messages[:-1], {**last, "content": f"{last['content']}{hint}"}]


def _parse_int(text: str) -> int | Decimal:
    return int(text) if len(text) <= _MAX_INT_DIGITS else Decimal(text)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def _since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
