"""Sign-in throttling (django-axes), by two counts of failed sign-ins within the
cool-off (AXES_COOLOFF_MINUTES), each against its own limit:

- a username at one address: AXES_FAILURE_LIMIT (5), someone guessing one password;
- an address, whatever the usernames: AXES_ADDRESS_FAILURE_LIMIT (20), password
  spraying (one guess at each of many usernames), which the first count never sees.

The address's limit is higher, so an office behind one NAT is not locked out by a few
mistyped passwords; once either count reaches its limit, sign-in from there (for that
username, or for anyone at that address) answers 429 until the cool-off passes.
AXES_LOCKOUT_PARAMETERS names both counts; axes compares one number with one limit, so
get_failures() gives the count furthest over its own limit, in AXES_FAILURE_LIMIT's
units (as the rate limit decides by the key furthest over)."""

from __future__ import annotations

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum
from django.http import HttpRequest


def limit_of(parameter: str | list[str]) -> int:
    """The failure limit of one entry of AXES_LOCKOUT_PARAMETERS: a username's (at an
    address) if it names the username, else the address's. 0: no limit."""
    names = {parameter} if isinstance(parameter, str) else set(parameter)
    if "username" in names:
        return int(settings.AXES_FAILURE_LIMIT)
    return int(settings.AXES_ADDRESS_FAILURE_LIMIT)


class LoginThrottle(AxesDatabaseHandler):
    def get_failures(self, request: HttpRequest, credentials: dict | None = None) -> int:
        """The count furthest over its own limit, scaled to AXES_FAILURE_LIMIT: it
        reaches AXES_FAILURE_LIMIT exactly when that count reaches its limit."""
        unit = int(settings.AXES_FAILURE_LIMIT)
        worst = 0
        counts = self.get_user_attempts(request, credentials)  # one per parameter entry
        for parameter, attempts in zip(settings.AXES_LOCKOUT_PARAMETERS, counts, strict=True):
            limit = limit_of(parameter)
            if limit <= 0:
                continue
            failures = attempts.aggregate(n=Sum("failures_since_start"))["n"] or 0
            worst = max(worst, failures * unit // limit)
        return worst

    def reset_user_attempts(self, request: HttpRequest, credentials: dict | None = None) -> int:
        """After a right password: that username's failures at this address are
        forgiven, no one else's. A valid account must not wipe the address's count of a
        spray over other usernames."""
        username = get_client_username(request, credentials)
        count, _ = AccessAttempt.objects.filter(
            username=username, ip_address=request.axes_ip_address
        ).delete()
        return count
