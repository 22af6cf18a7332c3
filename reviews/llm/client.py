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
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import httpx
from django.conf import settings
from pydantic import BaseModel

from connectors.base import tls_context
from reviews.llm.classify import classify
from reviews.llm.deadline import Deadline
from reviews.llm.errors import (
    CallTimeout,
    ConnectionFailed,
    Outcome,
    ProviderUnavailable,
    SchemaUnsupported,
    StructuredOutputError,
    Usage,
)
from reviews.llm.replies import parse_json_int, parse_reply, parse_usage

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

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
            verify=tls_context(),
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
            raise classify(
                response.status_code, response.text, use_schema, latency_ms, redact=self._redact
            )
        try:
            payload = json.loads(response.content, parse_int=parse_json_int)
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
            raise classify(
                status, json.dumps(error)[:500], False, latency_ms, usage, redact=self._redact
            )
        first = choices[0] if isinstance(choices, list) else None
        message = first.get("message") if isinstance(first, dict) else None
        if not isinstance(message, dict):
            raise ProviderUnavailable(
                "the reply has no message", usage=usage, latency_ms=latency_ms
            )
        content = message.get("content") or ""
        served = payload.get("model") or model
        return Exchange(str(served), str(content), usage, latency_ms)

    def _redact(self, text: str) -> str:
        """Providers sometimes echo the key in an error; it must reach no log or page."""
        return text.replace(self._api_key, "[redacted]") if self._api_key else text


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


def _since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
