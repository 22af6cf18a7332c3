"""A Salesforce REST API client over httpx that is a good citizen of an org's daily
API allowance. No Django.

Authentication is OAuth 2.0's client-credentials flow (server to server): the External
Client App's (or Connected App's) consumer key and secret are posted to the org's My
Domain, `POST /services/oauth2/token` with `grant_type=client_credentials`; Salesforce
answers an access token and the `instance_url` every later request goes to, run as the
app's integration user. The flow has no refresh token: when a request answers 401
(INVALID_SESSION_ID: the session expired or was revoked) the client asks for a new
token once and repeats the request; a second 401 is CredentialsRefused.

Salesforce counts an org's API requests per rolling 24 hours, shared by every
integration; each REST answer says how many are used of how many in its
`Sforce-Limit-Info: api-usage=USED/LIMIT` header. The client sends nothing more
(DailyLimitReached) once what is left is at or under `daily_floor`, the part left to the
org's other integrations; Salesforce's own refusal (403 REQUEST_LIMIT_EXCEEDED) is the
same error. 5xx, timeouts and dropped connections are retried with exponential backoff.
Errors come as Salesforce writes them, a JSON list of {"message", "errorCode"}.

Numbers are read as Decimal (never float), so an amount is written as Salesforce sent
it. Neither the secret nor a token is ever part of a message."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from urllib.parse import urlsplit

import httpx

from connectors.base import ConnectorError, CredentialsRefused, LimitReached, tls_context

API_VERSION = "v62.0"  # Winter '25; every resource used here exists since v29.0


class SalesforceError(ConnectorError):
    """Salesforce refused a request (its status, errorCode and message) or did not answer."""

    crm = "Salesforce"

    def __init__(
        self, status: int | None, message: str, *, code: str = "", body: object = None
    ) -> None:
        super().__init__(status, f"{code}: {message}" if code else message)
        self.code = code
        self.answer = body


class SessionRefused(SalesforceError, CredentialsRefused):
    """The app's credentials were refused, or a fresh token was refused again (401)."""


class DailyLimitReached(SalesforceError, LimitReached):
    """The org's daily API requests are spent (REQUEST_LIMIT_EXCEEDED), or what is left of
    them is down to the floor this client leaves to the org's other integrations."""


@dataclass(frozen=True, slots=True)
class Credentials:
    """What the External Client App gives, and where the org lives."""

    domain: str  # https://acme.my.salesforce.com (My Domain; a sandbox's works too)
    client_id: str  # the consumer key
    client_secret: str  # the consumer secret

    def __repr__(self) -> str:  # never the secret, in a traceback or a log
        return f"Credentials(domain={self.domain!r}, client_id={self.client_id[:6]!r}…)"


@dataclass(slots=True)
class Limits:
    # Requests of the org's day this client never goes below: it stops once the
    # allowance left (Sforce-Limit-Info) is at or under it.
    daily_floor: int = 5_000
    max_retries: int = 5  # 5xx and timeouts
    backoff_seconds: float = 1.0
    timeout_seconds: float = 60.0
    api_version: str = API_VERSION


class SalesforceClient:
    def __init__(
        self,
        credentials: Credentials,
        limits: Limits | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.credentials = credentials
        self.limits = limits or Limits()
        self._sleep = sleep
        self.while_waiting: Callable[[], None] | None = None
        self._http = httpx.Client(
            headers={"User-Agent": "revreview-connector/1", "Accept": "application/json"},
            timeout=self.limits.timeout_seconds,
            transport=transport,
            verify=tls_context(),
            follow_redirects=False,
        )
        self._token = ""
        self.instance_url = ""
        self.requests = 0
        self.waited = 0.0
        self.in_flight = 0.0
        self.daily_used: int | None = None
        self.daily_limit: int | None = None

    @property
    def daily_left(self) -> int | None:
        if self.daily_used is None or self.daily_limit is None:
            return None
        return max(self.daily_limit - self.daily_used, 0)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> SalesforceClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the resources --------------------------------------------------------------

    def data_path(self, rest: str) -> str:
        return f"/services/data/{self.limits.api_version}/{rest.lstrip('/')}"

    def describe(self, sobject: str) -> dict:
        """GET /sobjects/{name}/describe: the object's fields, as the integration user sees."""
        return self.request("GET", self.data_path(f"sobjects/{sobject}/describe"))

    def query_pages(
        self, soql: str, *, deleted: bool = True, next_url: str = ""
    ) -> Iterator[tuple[list[dict], str]]:
        """(records, the next page's nextRecordsUrl or "") page by page: queryAll (deleted
        and merged records too) or query; from `next_url` when resuming a locator."""
        if next_url:
            page = self.request("GET", next_url)
        else:
            resource = "queryAll" if deleted else "query"
            page = self.request("GET", self.data_path(resource), params={"q": soql})
        while True:
            following = "" if page.get("done", True) else str(page.get("nextRecordsUrl") or "")
            yield list(page.get("records") or []), following
            if not following:
                return
            page = self.request("GET", following)

    def create(self, sobject: str, fields: dict) -> dict:
        """POST /sobjects/{name}, sent once (a timeout or a 5xx may have made it) and not
        held back by the daily floor: a person approved it."""
        return self.request(
            "POST",
            self.data_path(f"sobjects/{sobject}"),
            json=fields,
            retry_failures=False,
            floor=False,
        )

    # --- the token ------------------------------------------------------------------

    def authenticate(self) -> None:
        """POST {My Domain}/services/oauth2/token with the client credentials."""
        domain = self.credentials.domain.rstrip("/")
        try:
            response = self._http.post(
                f"{domain}/services/oauth2/token",
                data={
                    "grant_type": "client_credentials",
                    "client_id": self.credentials.client_id,
                    "client_secret": self.credentials.client_secret,
                },
            )
        except (httpx.TimeoutException, httpx.TransportError) as error:
            raise SalesforceError(
                None, f"Salesforce's token endpoint at {domain} did not answer: "
                f"{type(error).__name__}"
            ) from None  # fmt: skip
        self.requests += 1
        body = _json(response)
        answer = body if isinstance(body, dict) else {}
        if response.status_code != 200 or not answer.get("access_token"):
            code = str(answer.get("error") or response.status_code)
            said = str(answer.get("error_description") or response.reason_phrase)[:300]
            raise SessionRefused(
                response.status_code, f"the token endpoint refused the app's credentials: {said}",
                code=code,
            )  # fmt: skip
        self._token = str(answer["access_token"])
        instance = str(answer.get("instance_url") or domain).rstrip("/")
        if urlsplit(instance).scheme not in ("http", "https"):
            raise SalesforceError(None, f"the token's instance_url is not a URL: {instance!r}")
        self.instance_url = instance

    # --- one request, paced and retried ---------------------------------------------

    def request(
        self, method: str, path: str, *, retry_failures: bool = True, floor: bool = True, **kwargs
    ) -> dict:
        """One request to the instance. A 401 gets one new token and one more try; 5xx
        and timeouts are retried unless `retry_failures` is False; with `floor`, nothing
        is sent once the org's requests left today are down to the daily floor."""
        if floor:
            self._check_daily_floor()
        if not self._token:
            self.authenticate()
        failures = 0 if retry_failures else self.limits.max_retries
        refreshed = False
        while True:
            self.requests += 1
            sent = time.monotonic()
            try:
                response = self._http.request(
                    method,
                    self.instance_url + path,
                    headers={"Authorization": f"Bearer {self._token}"},
                    **kwargs,
                )
            except (httpx.TimeoutException, httpx.TransportError) as error:
                self.in_flight += time.monotonic() - sent
                failures += 1
                if failures > self.limits.max_retries:
                    raise SalesforceError(
                        None, f"Salesforce unreachable: {type(error).__name__}"
                    ) from None
                self._wait(self.limits.backoff_seconds * 2 ** (failures - 1))
                continue
            self.in_flight += time.monotonic() - sent
            self._read_usage(response.headers)
            status = response.status_code
            if status == 401 and not refreshed:
                refreshed = True  # the session expired: one new token, one more try
                self.authenticate()
                continue
            if status >= 500:
                failures += 1
                if failures <= self.limits.max_retries:
                    self._wait(self.limits.backoff_seconds * 2 ** (failures - 1))
                    continue
            if status >= 300:
                raise _error(response)
            answer = _json(response, strict=True)
            if not isinstance(answer, dict):
                raise SalesforceError(status, f"an answer that is not a JSON object: {path}")
            return answer

    def _read_usage(self, headers: httpx.Headers) -> None:
        # Sforce-Limit-Info: api-usage=25/15000 (other limits may follow, comma-separated)
        for part in (headers.get("Sforce-Limit-Info") or "").split(","):
            name, _, value = part.strip().partition("=")
            if name != "api-usage":
                continue
            used, _, limit = value.partition("/")
            if used.isdigit() and limit.isdigit():
                self.daily_used, self.daily_limit = int(used), int(limit)

    def _check_daily_floor(self) -> None:
        left, floor = self.daily_left, self.limits.daily_floor
        if left is None or left > floor:
            return
        raise DailyLimitReached(
            None,
            f"the org has {left:,} of its {self.daily_limit:,} daily API requests left, at "
            f"or under the {floor:,} this connection leaves to its other integrations "
            "(SALESFORCE_DAILY_FLOOR)",
        )

    def _wait(self, seconds: float) -> None:
        if seconds <= 0:
            return
        self.waited += seconds
        deadline = time.monotonic() + seconds
        if self.while_waiting is not None:
            self.while_waiting()
        left = deadline - time.monotonic()
        if left > 0:
            self._sleep(left)


def _json(response: httpx.Response, *, strict: bool = False) -> object:
    """The body, numbers as Decimal (any length, never a float). A success that cannot be
    read is an error (`strict`): a page read as empty would drop records silently."""
    try:
        return json.loads(response.content, parse_float=Decimal, parse_int=Decimal)
    except (json.JSONDecodeError, UnicodeDecodeError, ValueError):
        if strict:
            raise SalesforceError(response.status_code, "an answer that is not JSON") from None
        return {}


def _error(response: httpx.Response) -> SalesforceError:
    """Salesforce's error list [{"message", "errorCode"}] as an exception of its kind."""
    status, body = response.status_code, _json(response)
    first = body[0] if isinstance(body, list) and body and isinstance(body[0], dict) else {}
    code = str(first.get("errorCode") or "")
    message = str(first.get("message") or response.reason_phrase or "no message")[:500]
    if 300 <= status < 400:
        return SalesforceError(status, "a redirect, not followed")
    if code == "REQUEST_LIMIT_EXCEEDED":
        return DailyLimitReached(status, message, code=code, body=body)
    if status in (401, 403):  # an expired session, or a permission the user lacks
        return SessionRefused(status, message, code=code, body=body)
    return SalesforceError(status, message, code=code, body=body)
