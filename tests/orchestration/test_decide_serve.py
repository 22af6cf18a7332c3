"""decide_serve: cached, fresh, failback (budget, rate limit) and error, in that order."""

import json

import pytest

from ledger import budget
from reviews.models import ReviewRun
from reviews.orchestration.serving.decide import (
    ERROR,
    ServeDecision,
    config_fingerprint,
    content_key,
    decide_serve,
)
from tests.orchestration.helpers import parse, reviewed_run, seed_batch

pytestmark = pytest.mark.django_db

IP = ["ip:203.0.113.7"]  # a request's rate keys (ledger.ratelimit.rate_keys)


def key_of(batch: dict) -> str:
    return content_key(parse(json.dumps(batch)))


def reordered_key() -> str:
    batch = seed_batch()
    batch["companies"].reverse()
    batch["contacts"].reverse()
    return content_key(parse(json.dumps(batch, indent=1, sort_keys=True)))


def test_decide_serve_cached_for_a_reordered_identical_batch(postgres, redis_url):
    run = reviewed_run(seed_batch())
    decision = decide_serve(reordered_key(), config_fingerprint(), IP, no_cache=False)
    assert decision == ServeDecision(ReviewRun.Mode.CACHED, reuse_run_id=run.pk)


def test_decide_serve_fresh_after_a_threshold_changes(postgres, redis_url, settings):
    reviewed_run(seed_batch())
    settings.REVIEW_RULES = settings.REVIEW_RULES.with_overrides({"deal_close_date_window_days": 7})
    decision = decide_serve(reordered_key(), config_fingerprint(), IP)
    assert decision == ServeDecision(ReviewRun.Mode.FRESH)


def test_decide_serve_no_cache_is_fresh(postgres, redis_url):
    reviewed_run(seed_batch())
    decision = decide_serve(reordered_key(), config_fingerprint(), IP, no_cache=True)
    assert decision == ServeDecision(ReviewRun.Mode.FRESH)


def test_decide_serve_fresh_for_new_content(postgres, redis_url):
    reviewed_run(seed_batch())
    other = seed_batch()
    other["deals"][0]["amount"] = 420000
    assert decide_serve(key_of(other), config_fingerprint(), IP).mode == ReviewRun.Mode.FRESH


def test_decide_serve_never_reuses_a_degraded_run(postgres, redis_url):
    reviewed_run(seed_batch(), degraded=True)
    decision = decide_serve(reordered_key(), config_fingerprint(), IP)
    assert decision.mode == ReviewRun.Mode.FRESH


def test_decide_serve_failback_with_reason_when_the_budget_is_spent(postgres, redis_url, settings):
    run = reviewed_run(seed_batch())
    settings.DAILY_TOKEN_BUDGET = 10_000
    settings.BUDGET_RESERVATION_TOKENS = 4_000
    assert budget.reserve() is not None
    assert budget.reserve() is not None
    assert budget.reserve() is None  # 12,000 would not fit
    decision = decide_serve(reordered_key(), config_fingerprint(), IP, no_cache=True)
    assert decision.mode == ReviewRun.Mode.FAILBACK
    assert decision.reason == (
        "daily token budget exhausted: 8,000 of 10,000 tokens used today (UTC), "
        "4,000 needed for the review"
    )
    assert decision.reuse_run_id == run.pk  # the last good run of the same content
    assert 0 < decision.retry_after <= 24 * 3600  # until the next UTC midnight


def test_decide_serve_failback_without_a_good_run_is_detector_only(postgres, redis_url, settings):
    settings.DAILY_TOKEN_BUDGET = 1_000
    settings.BUDGET_RESERVATION_TOKENS = 4_000
    decision = decide_serve(key_of(seed_batch()), config_fingerprint(), IP)
    assert decision.mode == ReviewRun.Mode.FAILBACK
    assert decision.reuse_run_id is None
    assert decision.reason.startswith("daily token budget exhausted")


def test_decide_serve_cache_hit_beats_a_spent_budget(postgres, redis_url, settings):
    run = reviewed_run(seed_batch())
    settings.DAILY_TOKEN_BUDGET = 1_000
    settings.BUDGET_RESERVATION_TOKENS = 4_000
    decision = decide_serve(reordered_key(), config_fingerprint(), IP)
    assert decision == ServeDecision(ReviewRun.Mode.CACHED, reuse_run_id=run.pk)


def test_decide_serve_rate_limit_failback_then_429(postgres, redis_url, settings):
    run = reviewed_run(seed_batch())
    settings.RATE_LIMIT_PER_HOUR = 2
    decisions = [
        decide_serve(reordered_key(), config_fingerprint(), IP, no_cache=True) for _ in range(6)
    ]
    assert [d.mode for d in decisions] == ["fresh", "fresh", "failback", "failback", ERROR, ERROR]
    assert decisions[2].reuse_run_id == run.pk
    last = decisions[-1]
    assert last.is_error
    assert last.reason == "rate limit: 6 requests this hour, limit 2"
    assert 0 < last.retry_after <= 3600
    # Far over the limit is refused even when a cache hit exists; other clients are not.
    assert decide_serve(reordered_key(), config_fingerprint(), IP).mode == ERROR
    other = decide_serve(reordered_key(), config_fingerprint(), ["ip:198.51.100.1"])
    assert other == ServeDecision(ReviewRun.Mode.CACHED, reuse_run_id=run.pk)


def test_decide_serve_rate_limit_failback_serves_the_last_good_run(postgres, redis_url, settings):
    run = reviewed_run(seed_batch())
    settings.RATE_LIMIT_PER_HOUR = 1
    decide_serve(reordered_key(), config_fingerprint(), IP, no_cache=True)
    decision = decide_serve(reordered_key(), config_fingerprint(), IP, no_cache=True)
    assert decision.mode == ReviewRun.Mode.FAILBACK
    assert decision.reason == "rate limit exceeded: 2 requests this hour, limit 1"
    assert decision.reuse_run_id == run.pk


def test_decide_serve_without_client_address_is_not_rate_limited(postgres, redis_url, settings):
    settings.RATE_LIMIT_PER_HOUR = 1
    modes = {decide_serve(key_of(seed_batch()), config_fingerprint(), None).mode for _ in range(5)}
    assert modes == {ReviewRun.Mode.FRESH}


def test_decide_serve_counts_the_workspace_of_two_key_requests(postgres, redis_url, settings):
    """A request spooled or queued with only its user and address (before the workspace
    key) still counts against the workspace it is served in."""
    settings.RATE_LIMIT_PER_HOUR = 100
    settings.RATE_LIMIT_PER_WORKSPACE_PER_HOUR = 1
    key, fingerprint = key_of(seed_batch()), config_fingerprint()
    alice, bob = ["user:1", "ip:203.0.113.7"], ["user:2", "ip:198.51.100.1"]
    modes = [decide_serve(key, fingerprint, who, workspace_id=41).mode for who in (alice, bob)]
    assert modes == [ReviewRun.Mode.FRESH, ReviewRun.Mode.FAILBACK]
    assert decide_serve(key, fingerprint, alice, workspace_id=41).reason == (
        "rate limit: 3 requests this hour, limit 1"
    )
    assert decide_serve(key, fingerprint, bob, workspace_id=42).mode == ReviewRun.Mode.FRESH
