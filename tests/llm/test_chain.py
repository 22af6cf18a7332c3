"""call_with_failback over a real socket to the loopback gateway, through the real
httpx client: one ledger row per attempt, failback only where it can help, every
attempt within the daily token budget."""

import logging
import time
from decimal import ROUND_HALF_UP, Decimal

import pytest

from ledger import budget
from ledger.models import LedgerEntry
from reviews.llm import errors
from reviews.llm.chain import call_with_failback, failback_models
from reviews.llm.schemas import SpecialistReply
from tests.llm.fake_gateway import Reply, completion, error, trickling
from tests.llm.helpers import API_KEY

pytestmark = pytest.mark.django_db

LITE = "google/gemini-3.1-flash-lite"
LITE_BACK = "google/gemini-2.5-flash-lite"
# USD per 1M tokens (input, cached input, output), from Google's pricing page, written
# out here rather than read from ledger.rates.
LITE_RATES = ("0.25", "0.025", "1.50")
LITE_BACK_RATES = ("0.10", "0.01", "0.40")
MESSAGES = [{"role": "system", "content": "shared"}, {"role": "user", "content": "task"}]
GOOD = {"add": [], "adjust": [], "dismiss": []}


def call(model=LITE, **kwargs):
    return call_with_failback("dedup", model, MESSAGES, SpecialistReply, **kwargs)


def rows():
    return list(LedgerEntry.objects.order_by("id"))


def micros(input_tokens, cached, output, rates):
    """tokens x rates, computed here independently of ledger.rates."""
    usd_in, usd_cached, usd_out = (Decimal(r) for r in rates)
    total = (input_tokens - cached) * usd_in + cached * usd_cached + output * usd_out
    return int(total.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def test_failback_chain_defaults_stay_in_the_family():
    assert failback_models(LITE) == [LITE, LITE_BACK]
    assert failback_models("google/gemini-3.5-flash") == [
        "google/gemini-3.5-flash",
        "google/gemini-3-flash-preview",
    ]
    assert failback_models(LITE_BACK) == [LITE_BACK]  # one step: the failback has none
    assert failback_models("other/model") == ["other/model"]
    assert failback_models("a", {"a": "b", "b": "a"}) == ["a", "b"]  # no loop


def test_success_writes_one_priced_row(llm_settings, fake_gateway):
    fake_gateway.script(
        LITE, completion(GOOD, prompt_tokens=4200, cached_tokens=3000, completion_tokens=310)
    )
    result = call(run_id=None)
    assert result.model_served == LITE
    (row,) = rows()
    assert (row.agent, row.model_requested, row.model, row.outcome) == ("dedup", LITE, LITE, "ok")
    assert (row.input_tokens, row.cached_tokens, row.output_tokens) == (4200, 3000, 310)
    assert row.cost_micros == micros(4200, 3000, 310, LITE_RATES) == 840
    assert row.latency_ms >= 0
    (request,) = fake_gateway.requests
    assert request.headers["Authorization"] == f"Bearer {API_KEY}"
    assert request.body["response_format"]["type"] == "json_schema"


@pytest.mark.parametrize("status", [503, 429, 500, 502])
def test_retryable_status_fails_back_to_the_family_model(llm_settings, fake_gateway, status):
    fake_gateway.script(LITE, error(status))
    fake_gateway.script(LITE_BACK, completion(GOOD, prompt_tokens=1000, completion_tokens=100))
    result = call()
    assert (result.model_requested, result.model_served) == (LITE, LITE_BACK)
    failed, served = rows()
    # As in docs/output.md: the attempt that failed says why; the call the failback model
    # served is requested by the agent's model, served by the failback, "failback".
    assert (failed.model_requested, failed.model, failed.outcome) == (LITE, None, "http_error")
    assert (failed.input_tokens, failed.output_tokens, failed.cost_micros) == (0, 0, 0)
    assert (served.model_requested, served.model, served.outcome) == (LITE, LITE_BACK, "failback")
    assert served.cost_micros == micros(1000, 0, 100, LITE_BACK_RATES)


@pytest.mark.slow
def test_slow_reply_times_out_and_fails_back(llm_settings, fake_gateway):
    fake_gateway.script(LITE, completion(GOOD, delay=3))
    fake_gateway.script(LITE_BACK, completion(GOOD))
    started = time.monotonic()
    assert call().model_served == LITE_BACK
    assert time.monotonic() - started < 2.5  # the 1 s timeout cut the slow reply short
    failed, served = rows()
    assert failed.outcome == "timeout" and failed.latency_ms >= 900
    assert (served.model, served.outcome) == (LITE_BACK, "failback")


@pytest.mark.slow
def test_a_trickling_reply_is_cut_at_the_timeout_and_fails_back(llm_settings, fake_gateway):
    # A byte every 0.1 s: no single read waits anywhere near the 1 s timeout, and the
    # whole body would take over 20 s. The call's one deadline cuts it at 1 s.
    fake_gateway.script(LITE, trickling(GOOD, every=0.1))
    fake_gateway.script(LITE_BACK, completion(GOOD))
    started = time.monotonic()
    assert call().model_served == LITE_BACK
    assert time.monotonic() - started < 3  # the whole body would take over 20 s
    failed, served = rows()
    assert failed.outcome == "timeout" and 900 <= failed.latency_ms < 2500
    assert (served.model, served.outcome) == (LITE_BACK, "failback")


@pytest.mark.slow
def test_a_trickle_within_the_timeout_is_read_whole(llm_settings, fake_gateway):
    llm_settings.LLM_TIMEOUT_SECONDS = 10
    fake_gateway.script(LITE, trickling(GOOD, every=0.005))
    assert call().model_served == LITE
    assert [r.outcome for r in rows()] == ["ok"]


@pytest.mark.slow
def test_the_last_model_timing_out_is_a_timeout(llm_settings, fake_gateway):
    fake_gateway.script(LITE_BACK, completion(GOOD, delay=3))
    with pytest.raises(errors.CallTimeout):
        call(LITE_BACK)
    assert [r.outcome for r in rows()] == ["timeout"]


def test_every_model_failing_raises_the_last_error(llm_settings, fake_gateway):
    fake_gateway.script(LITE, error(503))
    fake_gateway.script(LITE_BACK, error(503))
    with pytest.raises(errors.ProviderUnavailable):
        call()
    assert [(r.model_requested, r.model, r.outcome) for r in rows()] == [
        (LITE, None, "http_error"),
        (LITE, None, "http_error"),
    ]
    assert len(fake_gateway.requests_for(LITE_BACK)) == 1


def test_401_does_not_fail_back(llm_settings, fake_gateway):
    fake_gateway.script(LITE, error(401, "invalid api key"))
    with pytest.raises(errors.AuthFailed):
        call()
    assert [(r.model_requested, r.model, r.outcome) for r in rows()] == [(LITE, None, "http_error")]
    assert fake_gateway.requests_for(LITE_BACK) == []


def test_context_overflow_does_not_fail_back(llm_settings, fake_gateway):
    fake_gateway.script(LITE, error(400, "This model's maximum context length is 1000 tokens"))
    with pytest.raises(errors.ContextOverflow):
        call()
    assert fake_gateway.requests_for(LITE_BACK) == []


def test_invalid_json_is_repaired_once(llm_settings, fake_gateway):
    fake_gateway.script(
        LITE,
        completion("Sure! Here is the JSON: {", prompt_tokens=500, completion_tokens=40),
        completion(GOOD, prompt_tokens=560, completion_tokens=30),
    )
    assert call().model_served == LITE
    bad, good = rows()
    assert (bad.model, bad.outcome, bad.input_tokens, bad.output_tokens) == (
        LITE,
        "invalid_output",
        500,
        40,
    )
    assert bad.cost_micros == micros(500, 0, 40, LITE_RATES)
    assert good.outcome == "ok"
    repair = fake_gateway.requests_for(LITE)[1].messages
    assert repair[-2]["content"] == "Sure! Here is the JSON: {"


def test_invalid_json_twice_is_invalid_output_without_failback(llm_settings, fake_gateway):
    fake_gateway.script(LITE, completion("nope"), completion("still nope"))
    with pytest.raises(errors.StructuredOutputError):
        call()
    assert [(r.model, r.outcome) for r in rows()] == [
        (LITE, "invalid_output"),
        (LITE, "invalid_output"),
    ]
    assert fake_gateway.requests_for(LITE_BACK) == []


def test_a_provider_rejecting_json_schema_is_asked_in_json_mode(llm_settings, fake_gateway):
    fake_gateway.script(
        LITE,
        error(400, "response_format json_schema is not supported for this model"),
        completion(GOOD),
    )
    assert call().model_served == LITE
    assert [r.outcome for r in rows()] == ["http_error", "ok"]
    retry = fake_gateway.requests_for(LITE)[1]
    assert retry.body["response_format"] == {"type": "json_object"}


def test_no_call_starts_after_the_run_deadline(llm_settings, fake_gateway):
    with pytest.raises(errors.DeadlineExceeded):
        call(deadline_at=time.time() - 1)
    assert fake_gateway.requests == [] and rows() == []


@pytest.mark.slow
def test_the_run_deadline_shortens_the_call_timeout(llm_settings, fake_gateway):
    llm_settings.LLM_TIMEOUT_SECONDS = 30
    fake_gateway.script(LITE_BACK, completion(GOOD, delay=3))
    started = time.monotonic()
    with pytest.raises(errors.CallTimeout):
        call(LITE_BACK, deadline_at=time.time() + 1)
    assert time.monotonic() - started < 2.5


def test_the_api_key_reaches_no_log_and_no_ledger_row(llm_settings, fake_gateway, caplog):
    caplog.set_level(logging.DEBUG)  # every logger, httpx and httpcore included
    fake_gateway.script(LITE, error(401, f"Incorrect API key provided: {API_KEY}"))
    with pytest.raises(errors.AuthFailed) as raised:
        call()
    assert "401" in caplog.text  # the failure is logged...
    assert API_KEY not in caplog.text  # ...without the key
    assert API_KEY not in str(raised.value)
    row = LedgerEntry.objects.values().get()
    assert all(API_KEY not in str(value) for value in row.values())


# --- the daily token budget ---------------------------------------------------------


def test_each_attempt_reserves_and_settles_to_its_real_usage(
    llm_settings, breaker_redis, fake_gateway
):
    llm_settings.DAILY_TOKEN_BUDGET = 100_000
    fake_gateway.script(LITE, error(503))
    fake_gateway.script(
        LITE_BACK,
        completion("not json", prompt_tokens=900, completion_tokens=30),
        completion(GOOD, prompt_tokens=1000, completion_tokens=70),
    )
    before = budget.spent_today()
    assert call().model_served == LITE_BACK
    # Three exchanges in two attempts, each attempt settled to what its rows hold.
    assert [r.outcome for r in rows()] == ["http_error", "invalid_output", "failback"]
    assert budget.spent_today() - before == 900 + 30 + 1000 + 70
    assert budget.spent_today() == budget.ledger_tokens(budget.utc_today())


def test_a_spent_budget_sends_nothing_and_writes_no_row(llm_settings, breaker_redis, fake_gateway):
    llm_settings.DAILY_TOKEN_BUDGET = 1_000  # less than one reservation
    with pytest.raises(errors.BudgetSpent, match="daily token budget spent"):
        call()
    assert fake_gateway.requests == [] and rows() == []
    assert budget.spent_today() == 0


def test_a_spent_budget_stops_the_chain_before_the_failback(
    llm_settings, breaker_redis, fake_gateway
):
    llm_settings.DAILY_TOKEN_BUDGET = 10_000
    llm_settings.BUDGET_RESERVATION_TOKENS = 8_000
    # A gateway that bills a failed upstream call: 200 with only an error, and usage.
    billed_failure = Reply(
        200,
        {
            "error": {"code": 503, "message": "upstream overloaded"},
            "usage": {"prompt_tokens": 5000},
        },
    )
    fake_gateway.script(LITE, billed_failure)
    with pytest.raises(errors.BudgetSpent):
        call()
    # 5,000 spent, so the failback's 8,000 reservation did not fit: it was never sent.
    assert [(r.outcome, r.input_tokens) for r in rows()] == [("http_error", 5000)]
    assert fake_gateway.requests_for(LITE_BACK) == []
    assert budget.spent_today() == 5000
