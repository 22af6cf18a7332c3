"""Run as a separate process by test_breaker: make real calls that fail against the
loopback gateway until the model's breaker opens, as another worker would.

    python -m tests.llm.trip_breaker BASE_URL MODEL CALLS COOLDOWN

The environment gives DATABASE_URL and REDIS_URL, as a deployed worker has them."""

import os
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "revreview.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

from reviews.llm.breaker import Breaker  # noqa: E402
from reviews.llm.chain import call_with_failback  # noqa: E402
from reviews.llm.errors import LLMError  # noqa: E402
from reviews.llm.schemas import SpecialistReply  # noqa: E402


def main(base_url: str, model: str, calls: int, cooldown: int) -> None:
    settings.LLM_BASE_URL = base_url
    settings.LLM_API_KEY = "sk-child"
    settings.LLM_TIMEOUT_SECONDS = 2
    settings.BREAKER_FAILURE_THRESHOLD = calls
    settings.BREAKER_COOLDOWN_SECONDS = cooldown
    settings.LLM_FAILBACK_CHAIN = {}  # only this model: each call is one failure
    messages = [{"role": "user", "content": "review"}]
    for _ in range(calls):
        try:
            call_with_failback("dedup", model, messages, SpecialistReply)
        except LLMError as error:
            print(f"call failed: {type(error).__name__}", flush=True)
    print(f"state: {Breaker(model).state()}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
