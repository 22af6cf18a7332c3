"""Reading a gateway's reply: its usage (tokens, and the cost it states) and its text as
the structured output asked for."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from reviews.llm.errors import Usage

T = TypeVar("T", bound=BaseModel)

# A gateway's cost above this many USD for one call is not believed (a garbled number).
_MAX_GATEWAY_COST_USD = Decimal(10_000)
_MAX_INT_DIGITS = 30  # any real token count or cost fits


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


def parse_json_int(text: str) -> int | Decimal:
    """A JSON integer, kept as Decimal when too long for an int (Python refuses over 4,300
    digits): no usage field accepts one, so it reads as a garbled count, not a lost reply."""
    return int(text) if len(text) <= _MAX_INT_DIGITS else Decimal(text)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0
