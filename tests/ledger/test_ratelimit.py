"""Per-client rate limit (fixed hourly window), over plain keys: a signed-in user's, an
anonymous request's address, a workspace's."""

import pytest

from ledger.ratelimit import (
    WORKSPACE_FACTOR,
    RateDecision,
    hit,
    legacy_rate_keys,
    limit_of,
    rate_keys,
    with_workspace,
)

HOUR_START = 1_800_000_000 - 1_800_000_000 % 3600  # a clock hour, as a Unix time


@pytest.fixture
def limit_3(settings):
    settings.RATE_LIMIT_PER_HOUR = 3


def test_rate_limit_counts_per_address_within_the_hour(redis_url, limit_3):
    decisions = [hit("192.0.2.1", now=HOUR_START + 10) for _ in range(7)]
    assert [d.allowed for d in decisions] == [True] * 3 + [False] * 4
    assert [d.over_by for d in decisions] == [0, 0, 0, 1, 2, 3, 4]
    assert [d.far_over for d in decisions] == [False] * 6 + [True]
    assert decisions[-1] == RateDecision(allowed=False, count=7, limit=3, retry_after=3590)
    assert hit("192.0.2.2", now=HOUR_START + 10).count == 1


def test_each_key_is_counted_and_the_one_furthest_over_decides(redis_url, limit_3):
    at = HOUR_START + 10
    assert [hit(*rate_keys(7, "192.0.2.1"), now=at).count for _ in range(3)] == [1, 2, 3]
    # The same user from elsewhere: over by its user's count.
    assert hit(*rate_keys(7, "198.51.100.9"), now=at) == RateDecision(
        allowed=False, count=4, limit=3, retry_after=3590
    )
    # With a workspace (30 an hour) beside it, the user's count is still the one over.
    assert hit(*with_workspace(rate_keys(7, None), 5), now=at) == RateDecision(
        allowed=False, count=5, limit=3, retry_after=3590
    )
    assert hit(*rate_keys(9, "198.51.100.10"), now=at).count == 1
    assert hit(now=at) == RateDecision(allowed=True, count=0, limit=0, retry_after=3590)


def test_a_signed_in_request_counts_its_user_and_only_an_anonymous_one_its_address(
    redis_url, limit_3
):
    """Two people behind one office address: each has a limit of their own."""
    at = HOUR_START + 10
    assert rate_keys(7, "192.0.2.1") == ["user:7"]
    assert rate_keys(None, "192.0.2.1") == ["ip:192.0.2.1"]
    assert rate_keys(None, None) == [] and rate_keys(None, "") == []
    allowed = [hit(*rate_keys(7, "192.0.2.1"), now=at).allowed for _ in range(4)]
    assert allowed == [True, True, True, False]
    assert hit(*rate_keys(8, "192.0.2.1"), now=at).count == 1  # the colleague's first
    anonymous = [hit(*rate_keys(None, "192.0.2.1"), now=at).count for _ in range(2)]
    assert anonymous == [1, 2]  # the address alone, not the users behind it


def test_a_request_recorded_before_rate_keys_keeps_its_identity():
    assert legacy_rate_keys("user:5") == ["user:5"]
    assert legacy_rate_keys("192.0.2.1") == ["ip:192.0.2.1"]
    assert legacy_rate_keys(None) is None


def test_rate_limit_starts_over_in_the_next_hour(redis_url, limit_3):
    for _ in range(5):
        hit("192.0.2.1", now=HOUR_START + 3599)
    assert hit("192.0.2.1", now=HOUR_START + 3600) == RateDecision(
        allowed=True, count=1, limit=3, retry_after=3600
    )


def test_rate_limit_zero_means_unlimited(redis_url, settings):
    settings.RATE_LIMIT_PER_HOUR = 0
    assert all(hit("192.0.2.1").allowed for _ in range(10))


def test_rate_limit_counter_keys_expire(redis_url, limit_3):
    import redis

    hit("192.0.2.1", now=HOUR_START)
    client = redis.Redis.from_url(redis_url)
    (key,) = client.keys("revreview:rate:*")
    assert 3600 < client.ttl(key) <= 3660


def test_rate_limit_embedded_mode_uses_the_django_cache(settings, limit_3):
    settings.REDIS_URL = ""
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    counts = [hit("192.0.2.99", now=HOUR_START + 1).count for _ in range(4)]
    assert counts == [1, 2, 3, 4]
    assert hit("192.0.2.99", now=HOUR_START + 3600).count == 1


def test_a_workspace_key_has_its_own_limit_shared_by_its_members(redis_url, settings):
    settings.RATE_LIMIT_PER_HOUR = 5
    settings.RATE_LIMIT_PER_WORKSPACE_PER_HOUR = 3
    at = HOUR_START + 10
    assert with_workspace(rate_keys(7, None), 5) == ["user:7", "workspace:5"]
    assert with_workspace(["user:7", "workspace:5"], 5) == ["user:7", "workspace:5"]  # once
    assert with_workspace(None, 5) is None and with_workspace(["user:7"], None) == ["user:7"]
    alice = with_workspace(rate_keys(7, None), 5)
    bob = with_workspace(rate_keys(8, None), 5)
    assert [hit(*alice, now=at).allowed, hit(*bob, now=at).allowed] == [True, True]
    assert hit(*alice, now=at) == RateDecision(allowed=True, count=3, limit=3, retry_after=3590)
    # Bob's second request: well within his own limit, past the workspace's.
    assert hit(*bob, now=at) == RateDecision(allowed=False, count=4, limit=3, retry_after=3590)
    # Bob in another workspace: his own count only; the first workspace is not counted.
    assert hit(*with_workspace(rate_keys(8, None), 6), now=at).count == 3
    assert hit("workspace:5", now=at).count == 5


def test_the_workspace_limit_defaults_to_a_multiple_of_the_users(settings):
    settings.RATE_LIMIT_PER_HOUR = 4
    settings.RATE_LIMIT_PER_WORKSPACE_PER_HOUR = None
    assert limit_of("workspace:1") == WORKSPACE_FACTOR * 4 and limit_of("user:1") == 4
    settings.RATE_LIMIT_PER_HOUR = 0  # unlimited: workspaces too, unless set
    assert limit_of("workspace:1") == 0
    settings.RATE_LIMIT_PER_WORKSPACE_PER_HOUR = 0
    settings.RATE_LIMIT_PER_HOUR = 4
    assert limit_of("workspace:1") == 0 and hit("workspace:1").limit == 0
