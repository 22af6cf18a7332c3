"""The model pass's settings, each with the default it has when settings.py does not
set it. Read on every use, so a test's or an operator's override applies at once."""

from __future__ import annotations

from typing import Any

from django.conf import settings

DEFAULT_FAILBACK_CHAIN: dict[str, str | None] = {
    # Within one family only, and one step deep: a failback model has no failback.
    "google/gemini-2.5-flash": "google/gemini-2.0-flash",
    "google/gemini-2.5-flash-lite": "google/gemini-2.0-flash-lite",
}

DEFAULTS: dict[str, Any] = {
    "LLM_BASE_URL": "",  # empty: reviews run on the detectors alone
    "LLM_API_KEY": "",
    "LLM_TIMEOUT_SECONDS": 30,  # per HTTP call
    "LLM_CALL_TOKEN_BUDGET": 6000,  # estimated prompt tokens per call
    "LLM_MAX_OUTPUT_TOKENS": 2000,  # the reply's cap, so every call's cost is bounded
    "LLM_JSON_SCHEMA": True,  # False: always ask for plain JSON mode
    "LLM_FAILBACK_CHAIN": DEFAULT_FAILBACK_CHAIN,
    "LLM_ROSTER": {},  # agent -> model, over the default roster (the admin's rows win)
    "LLM_NEAR_MISS_LIMIT": 50,  # near-miss candidates asked of each detector
    "BREAKER_FAILURE_THRESHOLD": 3,
    "BREAKER_COOLDOWN_SECONDS": 120,
    "RUN_DEADLINE_SECONDS": 600,
}


def setting(name: str) -> Any:
    return getattr(settings, name, DEFAULTS[name])


def enabled() -> bool:
    """True when a gateway is configured; otherwise the detectors alone review."""
    return bool(setting("LLM_BASE_URL"))
