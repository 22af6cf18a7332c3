"""A HubSpot CRM API client that is a good citizen of a portal's rate limits. No Django.

HubSpot counts requests per portal, shared by every integration of it. Each answer
(outside the search API) carries the limits: `X-HubSpot-RateLimit-Max` requests per
`X-HubSpot-RateLimit-Interval-Milliseconds` with `X-HubSpot-RateLimit-Remaining` left, and
`X-HubSpot-RateLimit-Daily` / `-Daily-Remaining` for the day. The client
- keeps its own requests within `share` of the interval's limit (a rolling window of
  its own sends) and slows down when the portal's remaining count falls into the part
  it leaves to other integrations;
- sends no request (DailyLimitReached) once the portal's calls left today, as its last
  answer said, are down to `daily_floor`: the day's rest is the other integrations';
- paces the search API (no headers: a limit of its own, `search_per_second`);
- on 429 waits as told: Retry-After, else the interval; a 429 of the daily policy stops;
- retries 5xx, timeouts and dropped connections with exponential backoff;
- raises TokenRefused on 401/403 with HubSpot's message, HubSpotError on other 4xx.

Cursors (`after`) are HubSpot's and opaque: passed back as given, never read as numbers.
`waited` adds up every second spent sleeping for a limit, `in_flight` every second a
request was out (HubSpot's answer time), `requests` every request sent.
The token is sent in the Authorization header only; no message or error carries it."""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx

from connectors.base import ConnectorError, CredentialsRefused, LimitReached, tls_context
from connectors.hubspot.snapshot import epoch_ms

SEARCH_CAP = 10_000  # the search API answers 400 past this many results of one query
SEARCH_PAGE = 200
LIST_PAGE = 100
# Seconds added to a wait for a window to pass: HubSpot's clock starts when the request
# arrives, a little after ours.
_MARGIN = 0.05


class HubSpotError(ConnectorError):
    """HubSpot refused a request: its status and message."""

    crm = "HubSpot"

    def __init__(
        self, status: int | None, message: str, *, category: str = "", body: dict | None = None
    ) -> None:
        super().__init__(status, message, body=body)
        self.category = category


class TokenRefused(HubSpotError, CredentialsRefused):
    """401 or 403: the token is wrong, revoked or lacks a scope."""


class DailyLimitReached(HubSpotError, LimitReached):
    """The portal's daily limit is spent, or its calls left are down to the floor this
    client leaves to the portal's other integrations."""


@dataclass(slots=True)
class Limits:
    share: float = 0.5  # of the portal's interval limit (and the search limit), at most
    # Calls of the portal's day this client never goes below: it stops once
    # X-HubSpot-RateLimit-Daily-Remaining is at or under it.
    daily_floor: int = 25_000
    search_per_second: float = 5.0  # HubSpot's search limit, per portal
    max_retries: int = 5  # 5xx and timeouts
    max_waits: int = 20  # 429s in a row
    backoff_seconds: float = 1.0
    timeout_seconds: float = 30.0


class HubSpotClient:
    def __init__(
        self,
        base_url: str,
        token: str,
        limits: Limits | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.limits = limits or Limits()
        self._sleep = sleep
        self.while_waiting: Callable[[], None] | None = None
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers={"Authorization": f"Bearer {token}", "User-Agent": "revreview-connector/1"},
            timeout=self.limits.timeout_seconds,
            transport=transport,
            verify=tls_context(),
            follow_redirects=False,  # a redirect is an error (request()), never followed
        )
        self.requests = 0
        self.waited = 0.0
        self.in_flight = 0.0  # seconds between sending a request and its answer
        self._sent: deque[float] = deque()  # our own sends in the current interval
        self._searches: deque[float] = deque()
        self._max: int | None = None
        self._interval = 10.0  # seconds, until HubSpot says
        self._remaining: int | None = None
        self.daily_left: int | None = None  # the portal's, as its last answer said
        self.daily_limit: int | None = None  # and its whole daily allowance

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> HubSpotClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the endpoints --------------------------------------------------------------

    def account_details(self) -> dict:
        return self.request("GET", "/account-info/v3/details")

    def deal_pipelines(self) -> dict:
        return self.request("GET", "/crm/v3/pipelines/deals")

    def list_pages(
        self, object_type: str, properties: list[str], *, archived: bool = False, after: str = ""
    ) -> Iterator[tuple[list[dict], str]]:
        """(objects, the cursor of the next page or "") page by page, from `after`."""
        while True:
            params = {
                "limit": LIST_PAGE,
                "properties": ",".join(properties),
                "archived": "true" if archived else "false",
            }
            if after:
                params["after"] = after
            page = self.request("GET", f"/crm/v3/objects/{object_type}", params=params)
            after = next_after(page)
            yield page.get("results") or [], after
            if not after:
                return

    def search_modified(
        self,
        object_type: str,
        prop: str,
        since_ms: int,
        properties: list[str],
        *,
        after: str = "",
        seen: int = 0,
    ) -> Iterator[tuple[list[dict], int, str, int]]:
        """Objects modified at or after `since_ms`, oldest first: (objects, the window's
        start, the cursor in it, how many results of the window came up to the cursor).
        The cursor is opaque (HubSpot's to read, not ours), so the 10,000-result cap of
        one query is counted from the results received: before the next page would pass
        it, a new window starts at the newest time seen (its records come again; callers
        key by id). `seen` goes with `after` when resuming."""
        window = since_ms
        while True:
            body = {
                "filterGroups": [
                    {"filters": [{"propertyName": prop, "operator": "GTE", "value": str(window)}]}
                ],
                "sorts": [{"propertyName": prop, "direction": "ASCENDING"}],
                "properties": properties,
                "limit": SEARCH_PAGE,
            }
            if after:
                body["after"] = after
            page = self.request("POST", f"/crm/v3/objects/{object_type}/search", json=body)
            results = page.get("results") or []
            after = next_after(page)
            seen += len(results)
            if after and seen + SEARCH_PAGE > SEARCH_CAP:  # the next page would pass the cap
                newest = max((_modified_ms(o, prop) for o in results), default=window)
                if newest <= window:
                    raise HubSpotError(
                        None, f"more than {SEARCH_CAP:,} {object_type} share one modified time"
                    )
                window, after, seen = newest, "", 0
                yield results, window, after, seen
                continue
            yield results, window, after, seen
            if not after:
                return

    # --- one request, paced and retried ---------------------------------------------

    def create_task(self, body: dict) -> dict:
        """POST /crm/v3/objects/tasks, sent once (a timeout or a 5xx may have made it) and
        not held back by the daily floor: a person approved it, as with a merge."""
        return self.request(
            "POST", "/crm/v3/objects/tasks", json=body, retry_failures=False, floor=False
        )

    def merge(self, object_type: str, primary_id: str, object_id_to_merge: str) -> dict:
        """POST /crm/v3/objects/{type}/merge. Sent once: a timeout or a 5xx may have
        merged, so it is not retried (a 429 is: HubSpot did nothing). Not held back by
        the daily floor, which spares the portal's day from pulls: a merge is one call a
        person asked for (HubSpot's own daily 429 still refuses it)."""
        body = {"primaryObjectId": primary_id, "objectIdToMerge": object_id_to_merge}
        return self.request(
            "POST",
            f"/crm/v3/objects/{object_type}/merge",
            json=body,
            retry_failures=False,
            floor=False,
        )

    def request(
        self, method: str, path: str, *, retry_failures: bool = True, floor: bool = True, **kwargs
    ) -> dict:
        """One request, paced; 429s waited out; 5xx and timeouts retried unless
        `retry_failures` is False (a request that must not be sent twice). With `floor`,
        nothing is sent once the portal's calls left today are down to the daily floor."""
        if floor:
            self._check_daily_floor()
        search = path.endswith("/search")
        if not retry_failures:
            failures = self.limits.max_retries
            waits = 0
        else:
            failures = waits = 0
        while True:
            self._pace(search)
            self.requests += 1
            sent = time.monotonic()
            try:
                response = self._http.request(method, path, **kwargs)
            except (httpx.TimeoutException, httpx.TransportError) as error:
                self.in_flight += time.monotonic() - sent
                failures += 1
                if failures > self.limits.max_retries:
                    raise HubSpotError(
                        None, f"HubSpot unreachable: {type(error).__name__}"
                    ) from None
                self._wait(self.limits.backoff_seconds * 2 ** (failures - 1))
                continue
            self.in_flight += time.monotonic() - sent
            if not search:
                self._read_limits(response.headers)
            if response.status_code == 429:
                waits += 1
                body = _json(response)
                if body.get("policyName") == "DAILY" or waits > self.limits.max_waits:
                    raise DailyLimitReached(429, _message(body, response), body=body)
                self._wait(self._told_to_wait(response.headers, search))
                continue
            if response.status_code >= 500:
                failures += 1
                if failures > self.limits.max_retries:
                    body = _json(response)
                    raise HubSpotError(response.status_code, _message(body, response), body=body)
                self._wait(self.limits.backoff_seconds * 2 ** (failures - 1))
                continue
            if 300 <= response.status_code < 400:  # not a page: an empty pull is no pull
                raise HubSpotError(response.status_code, "a redirect, not followed")
            if response.status_code in (401, 403):
                body = _json(response)
                raise TokenRefused(
                    response.status_code,
                    _message(body, response),
                    category=body.get("category", ""),
                    body=body,
                )
            if response.status_code >= 400:
                body = _json(response)
                raise HubSpotError(
                    response.status_code,
                    _message(body, response),
                    category=body.get("category", ""),
                    body=body,
                )
            return _json(response)

    def _pace(self, search: bool) -> None:
        now = time.monotonic()
        if search:
            per_second = max(self.limits.search_per_second * self.limits.share, 0.5)
            _drop_older(self._searches, now - 1.0)
            if len(self._searches) >= max(int(per_second), 1):
                self._wait(self._searches[0] + 1.0 + _MARGIN - now)
            self._searches.append(time.monotonic())
            return
        _drop_older(self._sent, now - self._interval)
        budget = max(int((self._max or 100) * self.limits.share), 1)
        if len(self._sent) >= budget:
            self._wait(self._sent[0] + self._interval + _MARGIN - now)
        elif self._max and self._remaining is not None:
            reserve = self._max - budget  # left to the portal's other integrations
            if self._remaining <= reserve:
                self._wait(self._interval / budget)
        self._sent.append(time.monotonic())

    def _read_limits(self, headers: httpx.Headers) -> None:
        if (value := _int(headers.get("X-HubSpot-RateLimit-Max"))) is not None:
            self._max = value
        if (value := _int(headers.get("X-HubSpot-RateLimit-Interval-Milliseconds"))) is not None:
            self._interval = value / 1000
        self._remaining = _int(headers.get("X-HubSpot-RateLimit-Remaining"))
        daily = _int(headers.get("X-HubSpot-RateLimit-Daily"))
        left = _int(headers.get("X-HubSpot-RateLimit-Daily-Remaining"))
        if left is not None:
            self.daily_left = left
        if daily is not None:
            self.daily_limit = daily

    def _check_daily_floor(self) -> None:
        """Checked before a request, never after: an answer received (a merge made) is
        not thrown away for what its headers say."""
        left, floor = self.daily_left, self.limits.daily_floor
        if left is None or left > floor:
            return
        of = f" of its {self.daily_limit:,}" if self.daily_limit else ""
        raise DailyLimitReached(
            None,
            f"the portal has {left:,}{of} daily API requests left, at or under the "
            f"{floor:,} this connection leaves to its other integrations "
            "(HUBSPOT_DAILY_FLOOR)",
        )

    def _told_to_wait(self, headers: httpx.Headers, search: bool) -> float:
        retry_after = headers.get("Retry-After")
        if retry_after:
            try:
                return float(retry_after)
            except ValueError:
                pass
        return 1.0 if search else self._interval

    def _wait(self, seconds: float) -> None:
        """Sleep for a limit. `while_waiting` (the pull's checkpoint writes) runs first,
        inside the wait: the time is the limit's either way."""
        if seconds <= 0:
            return
        self.waited += seconds
        deadline = time.monotonic() + seconds
        if self.while_waiting is not None:
            self.while_waiting()
        left = deadline - time.monotonic()
        if left > 0:
            self._sleep(left)


def _drop_older(sent: deque[float], horizon: float) -> None:
    while sent and sent[0] <= horizon:
        sent.popleft()


def next_after(page: dict) -> str:
    following = (page.get("paging") or {}).get("next") or {}
    return str(following.get("after") or "")


def _modified_ms(obj: dict, prop: str) -> int:
    return epoch_ms((obj.get("properties") or {}).get(prop) or obj.get("updatedAt"))


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except ValueError:
        return None


def _json(response: httpx.Response) -> dict:
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError, ValueError):
        return {}
    return body if isinstance(body, dict) else {}


def _message(body: dict, response: httpx.Response) -> str:
    return str(body.get("message") or response.reason_phrase or "no message")[:500]
