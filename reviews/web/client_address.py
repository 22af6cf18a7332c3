"""Who a web request is, for the rate limit and the sign-in throttle: its signed-in user
(or an API token's) and its client address behind our proxies. The limiter itself
(ledger.ratelimit) takes the plain keys this makes."""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest

from ledger.ratelimit import rate_keys


def client_ip(request: HttpRequest) -> str:
    """The client's address. TRUSTED_PROXY_COUNT = 0: REMOTE_ADDR. n > 0: the n-th
    address from the right of X-Forwarded-For, the one our outermost trusted proxy saw
    (addresses further left are whatever the client claims). A header with fewer
    entries means fewer proxies were passed: its leftmost entry is then the one a
    trusted proxy wrote. A missing or malformed header falls back to REMOTE_ADDR."""
    remote = request.META.get("REMOTE_ADDR", "")
    proxies = int(settings.TRUSTED_PROXY_COUNT)
    if proxies <= 0:
        return remote
    forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    forwarded = [a for a in forwarded if a]
    if not forwarded:
        return remote
    candidate = forwarded[-proxies] if len(forwarded) >= proxies else forwarded[0]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return remote


def request_rate_keys(request: HttpRequest, user_id: int | None = None) -> list[str]:
    """The rate keys of a web request (ledger.ratelimit.rate_keys, which decides what
    counts): its signed-in user, or `user_id` (an API token's), and its client address."""
    if user_id is None and getattr(request, "user", None) is not None:
        user_id = request.user.pk if request.user.is_authenticated else None
    return rate_keys(user_id, client_ip(request))
