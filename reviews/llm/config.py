"""Whether the model pass runs. Every other model-pass setting (LLM_*, BREAKER_*,
RUN_DEADLINE_SECONDS) is read from django.conf.settings where it is used, on every
use, so a test's or an operator's override applies at once; revreview/settings.py
defines them all from the environment."""

from __future__ import annotations

from django.conf import settings


def enabled() -> bool:
    """True when a gateway is configured; otherwise the detectors alone review."""
    return bool(settings.LLM_BASE_URL)
