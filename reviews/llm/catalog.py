"""Which models the gateway lists: GET {LLM_BASE_URL}/models, the OpenAI-compatible
model list that OpenRouter, LiteLLM, Ollama, vLLM and Google's OpenAI-compatible
endpoint serve ({"data": [{"id": ...}, ...]}). `manage.py check_models` compares the
roster with it, so a retired or misspelt model is found before a review needs it."""

from __future__ import annotations

from dataclasses import dataclass

import httpx
from django.conf import settings

from connectors.base import tls_context
from reviews.llm.chain import failback_models
from reviews.llm.roster import DEFAULT_ROSTER, model_for


@dataclass(frozen=True, slots=True)
class Catalog:
    ids: frozenset[str] | None  # None: the gateway has no model list to ask
    problem: str = ""  # why there is no list

    def lists(self, model: str) -> bool | None:
        """True or False; None when there is no list to tell."""
        if self.ids is None:
            return None
        # Google's endpoint names its models "models/<id>"; match the bare id too.
        return model in self.ids or _bare(model) in {_bare(i) for i in self.ids}


def fetch_catalog(transport: httpx.BaseTransport | None = None) -> Catalog:
    base = settings.LLM_BASE_URL.rstrip("/")
    key = settings.LLM_API_KEY
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    timeout = float(settings.LLM_TIMEOUT_SECONDS)
    try:
        with httpx.Client(
            headers=headers,
            transport=transport,
            verify=tls_context(),
            timeout=timeout,
            follow_redirects=False,
        ) as http:
            response = http.get(f"{base}/models")
    except httpx.HTTPError as error:
        return Catalog(None, _redact(f"{type(error).__name__}: {error}", key))
    if not response.is_success:
        return Catalog(None, _redact(f"HTTP {response.status_code}: {response.text[:200]}", key))
    try:
        data = response.json().get("data")
    except (ValueError, AttributeError):
        data = None
    if not isinstance(data, list):
        return Catalog(None, "the reply is not an OpenAI-style model list")
    ids = (item.get("id") for item in data if isinstance(item, dict))
    return Catalog(frozenset(i for i in ids if isinstance(i, str)))


def roster_models() -> dict[str, list[str]]:
    """Every model the roster can call, with who calls it: each agent's model (admin
    row, LLM_ROSTER, default) and the failbacks of its chain."""
    used: dict[str, list[str]] = {}
    for agent in DEFAULT_ROSTER:
        chain = failback_models(model_for(agent))
        used.setdefault(chain[0], []).append(agent)
        for previous, model in zip(chain, chain[1:], strict=False):
            used.setdefault(model, []).append(f"failback of {previous}")
    return {model: sorted(set(users)) for model, users in used.items()}


def _bare(model_id: str) -> str:
    return model_id.removeprefix("models/")


def _redact(text: str, key: str) -> str:
    return text.replace(key, "[redacted]") if key else text
