"""A loopback stand-in for the HubSpot API, written from HubSpot's documented behaviour.

Serves, on 127.0.0.1 and a free port:
- GET  /account-info/v3/details
- GET  /crm/v3/objects/{type}?limit&after&properties&archived  (<= 100 a page, `after`)
- POST /crm/v3/objects/{type}/search  (GTE filter on a date property, one ascending sort,
  <= 200 a page, an opaque `after` cursor (not a number); 400 past the 10,000th result;
  its own per-second limit, no headers)
- POST /crm/v4/associations/{from}/{to}/batch/read  (<= 1,000 inputs, each `{"id"}` or
  `{"id", "after"}`; each result a page of `Portal.association_page` associations with
  its own opaque `paging.next.after`; 207 with `errors` for the inputs it does not
  answer: NO_ASSOCIATIONS_FOUND, or an error `Portal.association_errors` asks for)
- GET  /crm/v3/properties/{type}, POST /crm/v3/objects/{type} (create) and
  /crm/v3/objects/{type}/batch/read, POST /crm/v4/associations/{from}/{to}/batch/create:
  standin_writes.py
- GET  /crm/v3/pipelines/deals
- POST /crm/v3/objects/tasks  (a task on a record: tests/connectors/task_standin.py)
- POST /crm/v3/objects/{type}/merge  ({"primaryObjectId", "objectIdToMerge"}, either an
  alias of a merged record: Portal.merge, 200 with the surviving object, a new deal for
  deals; 400 when either record is not there or both are one)
Every other answer carries X-HubSpot-RateLimit-{Daily,Daily-Remaining,
Interval-Milliseconds,Max,Remaining}; past `max_per_interval` requests in a rolling
interval it answers 429 with HubSpot's body (policyName TEN_SECONDLY_ROLLING), and past
`daily` requests (`daily_used`) 429 with policyName DAILY. A wrong
or revoked token gets 401 with HubSpot's body. `fail_next` queues status codes to answer
next (500, 502, 503, 429), `revoke_after` revokes the token after that many requests,
`slow_next` holds the next answers that many seconds each after doing the work (a client
that gives up first has had its request carried out all the same). `merges` lists the
merges done, (type, primary, merged) (the survivor: `Portal.current(merged)`), `bodies`
every POST's path and body. The portal's state and what changing it does:
standin_portal.py."""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from tests.connectors import standin_writes
from tests.connectors.standin_portal import MODIFIED, SEARCH_CAP, Portal, _iso
from tests.connectors.standin_writes import TYPE_IDS
from tests.connectors.task_standin import create_task
from tests.loopback import serving_thread

__all__ = ["MODIFIED", "SEARCH_CAP", "Portal", "StandIn", "serving"]


def _error(message: str, category: str, **more) -> dict:
    return {
        "status": "error",
        "message": message,
        "correlationId": str(uuid.uuid4()),
        "category": category,
        **more,
    }


class _Handler(BaseHTTPRequestHandler):
    portal: Portal
    protocol_version = "HTTP/1.1"  # keep-alive, as HubSpot's servers do
    disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms stall

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self._answer("GET")

    def do_POST(self) -> None:
        self._answer("POST")

    def _answer(self, method: str) -> None:
        portal = self.portal
        url = urlparse(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}") if length else {}
        search = url.path.endswith("/search")
        with portal.lock:
            portal.requests += 1
            if method == "POST":
                portal.bodies.append((url.path, body))
            status, payload, headers = self._route(portal, method, url, body, search)
            portal.log.append((method, url.path, status))
            slow = portal.slow_next.pop(0) if portal.slow_next else 0.0
        time.sleep(slow)
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json;charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _route(self, portal: Portal, method, url, body, search):
        token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
        if portal.revoke_after is not None and portal.requests > portal.revoke_after:
            portal.tokens.discard(token)
        if token not in portal.tokens:
            return (
                401,
                _error(
                    "Authentication credentials not found. This API supports OAuth 2.0 "
                    "authentication and you can find more details at "
                    "https://developers.hubspot.com/docs/methods/auth/oauth-overview",
                    "INVALID_AUTHENTICATION",
                ),
                {},
            )
        now = time.monotonic()
        if search:
            while portal.searches and portal.searches[0] <= now - 1.0:
                portal.searches.popleft()
            if len(portal.searches) >= portal.search_per_second:
                return (
                    429,
                    _error(
                        "You have reached your secondly limit.",
                        "RATE_LIMITS",
                        errorType="RATE_LIMIT",
                        policyName="SECONDLY",
                    ),
                    {},
                )
            portal.searches.append(now)
            headers = {}
        else:
            while portal.sent and portal.sent[0] <= now - portal.interval_ms / 1000:
                portal.sent.popleft()
            if len(portal.sent) >= portal.max_per_interval:
                headers = portal.limit_headers()
                if portal.retry_after:
                    headers["Retry-After"] = portal.retry_after
                return (
                    429,
                    _error(
                        "You have reached your ten_secondly_rolling limit.",
                        "RATE_LIMITS",
                        errorType="RATE_LIMIT",
                        policyName="TEN_SECONDLY_ROLLING",
                    ),
                    headers,
                )
            if portal.daily_used >= portal.daily:  # the day's requests are spent
                return (
                    429,
                    _error(
                        "You have reached your daily limit.",
                        "RATE_LIMITS",
                        errorType="RATE_LIMIT",
                        policyName="DAILY",
                    ),
                    portal.limit_headers(),
                )
            portal.sent.append(now)
            portal.daily_used += 1
            headers = portal.limit_headers()
        if portal.fail_next:
            code = portal.fail_next.pop(0)
            if code == 429:
                return (
                    429,
                    _error(
                        "You have reached your ten_secondly_rolling limit.",
                        "RATE_LIMITS",
                        errorType="RATE_LIMIT",
                        policyName="TEN_SECONDLY_ROLLING",
                    ),
                    headers,
                )
            return (
                code,
                {"status": "error", "message": "internal error", "category": "INTERNAL_ERROR"},
                headers,
            )
        parts = url.path.strip("/").split("/")
        query = parse_qs(url.query)
        try:
            if url.path == "/account-info/v3/details":
                return (
                    200,
                    {
                        "portalId": portal.portal_id,
                        "accountType": "STANDARD",
                        "timeZone": "Europe/Berlin",
                        "companyCurrency": "EUR",
                        "additionalCurrencies": ["USD"],
                        "utcOffset": "+01:00",
                        "utcOffsetMilliseconds": 3600000,
                        "uiDomain": "app-eu1.hubspot.com",
                        "dataHostingLocation": "eu1",
                    },
                    headers,
                )
            if parts == ["crm", "v3", "objects", "tasks"] and method == "POST":
                return create_task(portal, body) + (headers,)
            if (written := standin_writes.route(portal, method, parts, body, _object)) is not None:
                return written + (headers,)
            if url.path == "/crm/v3/pipelines/deals":
                return 200, {"results": portal.pipelines}, headers
            if parts[:3] == ["crm", "v3", "objects"] and method == "GET" and len(parts) == 4:
                return 200, self._list(portal, parts[3], query), headers
            if parts[:3] == ["crm", "v3", "objects"] and parts[4:] == ["merge"]:
                return self._merge(portal, parts[3], body) + (headers,)
            if parts[:3] == ["crm", "v3", "objects"] and search:
                return self._search(portal, parts[3], body) + (headers,)
            if parts[:3] == ["crm", "v4", "associations"] and parts[-2:] == ["batch", "read"]:
                return self._links(portal, parts[3], parts[4], body) + (headers,)
        except KeyError as error:
            return 400, _error(f"bad request: {error}", "VALIDATION_ERROR"), headers
        return 404, _error("not found", "OBJECT_NOT_FOUND"), headers

    def _list(self, portal: Portal, object_type: str, query: dict) -> dict:
        limit = min(int(query.get("limit", ["10"])[0]), 100)
        archived = query.get("archived", ["false"])[0] == "true"
        wanted = [p for p in query.get("properties", [""])[0].split(",") if p]
        ids, keys = portal.sorted_ids(object_type, archived)
        after = query.get("after", [None])[0]
        start = bisect.bisect_left(keys, int(after)) if after else 0
        page = ids[start : start + limit]
        out = {"results": [_object(portal, object_type, i, wanted) for i in page]}
        if start + limit < len(ids):
            following = ids[start + limit]
            out["paging"] = {"next": {"after": following, "link": f"?after={following}"}}
        return out

    def _search(self, portal: Portal, object_type: str, body: dict):
        after = _offset(body.get("after"))
        if after is None:
            return 400, _error(f"invalid after: {body.get('after')!r}", "VALIDATION_ERROR")
        if after >= SEARCH_CAP:
            return 400, _error(
                f"Search results are limited to {SEARCH_CAP} records: refine the search",
                "VALIDATION_ERROR",
            )
        limit = min(int(body.get("limit") or 10), 200)
        (group,) = body["filterGroups"]
        (flt,) = group["filters"]
        prop, since = flt["propertyName"], int(flt["value"])
        matches = [
            i
            for i in portal.live(object_type)
            if int(portal.objects[object_type][i]["properties"].get(prop) or 0) >= since
        ]
        matches.sort(
            key=lambda i: (int(portal.objects[object_type][i]["properties"][prop]), int(i))
        )
        page = matches[after : after + limit]
        out = {
            "total": len(matches),
            "results": [
                _object(portal, object_type, i, body.get("properties") or []) for i in page
            ],
        }
        if after + limit < len(matches):
            out["paging"] = {"next": {"after": _cursor(after + limit)}}
        return 200, out

    def _merge(self, portal: Portal, object_type: str, body: dict):
        asked = str(body["primaryObjectId"]), str(body["objectIdToMerge"])
        primary, merged = (portal.current(object_type, rid) for rid in asked)
        objects = portal.objects[object_type]
        for rid in (primary, merged):
            if rid not in objects or objects[rid]["archived"] or primary == merged:
                return 400, _error(f"Object {rid} cannot be merged", "VALIDATION_ERROR")
        survivor = portal.merge(object_type, primary, merged)
        portal.merges.append((object_type, primary, merged))
        return 200, _object(portal, object_type, survivor, list(objects[survivor]["properties"]))

    def _links(self, portal: Portal, from_type: str, to_type: str, body: dict):
        inputs = body["inputs"]
        if len(inputs) > 1000:
            return 400, _error("Too many inputs: the limit is 1000", "VALIDATION_ERROR")
        links = portal.links_from(from_type, to_type)
        results, errors = [], []
        for item in inputs:
            rid = str(item["id"])
            start = _offset(item.get("after"))
            context = {"fromObjectId": [rid], "fromObjectType": [from_type[:-1]],
                       "toObjectType": [to_type[:-1]]}  # fmt: skip
            if portal.association_errors.get(rid, 0) > 0:
                portal.association_errors[rid] -= 1
                errors.append(_error("Internal error reading associations", "INTERNAL_ERROR",
                                     context=context))  # fmt: skip
                continue
            found = links.get(rid) or []
            if not found or start is None:
                errors.append(
                    _error(
                        f"No {to_type} is associated with {from_type} {rid}.",
                        "OBJECT_NOT_FOUND",
                        subCategory="crm.associations.NO_ASSOCIATIONS_FOUND",
                        context=context,
                    )
                )
                continue
            end = start + portal.association_page
            shown = [_to(from_type, to_type, t, p) for t, p in found[start:end]]
            result = {"from": {"id": rid}, "to": shown}
            if end < len(found):
                result["paging"] = {"next": {"after": _cursor(end), "link": None}}
            results.append(result)
        answer = {
            "status": "COMPLETE",
            "results": results,
            "startedAt": _iso(portal.clock_ms),
            "completedAt": _iso(portal.clock_ms),
        }
        if errors:  # some inputs unanswered: HubSpot's multi-status
            return 207, {**answer, "numErrors": len(errors), "errors": errors}
        return 200, answer


def _to(from_type: str, to_type: str, to_id: str, primary: bool) -> dict:
    primary_id, plain_id = TYPE_IDS[(from_type, to_type)]
    labels = []
    if primary and primary_id:
        labels.append({"category": "HUBSPOT_DEFINED", "typeId": primary_id, "label": "Primary"})
    labels.append({"category": "HUBSPOT_DEFINED", "typeId": plain_id, "label": None})
    return {"toObjectId": int(to_id), "associationTypes": labels}


def _cursor(offset: int) -> str:
    """An opaque cursor, as HubSpot's are: not a number a client could read."""
    return base64.urlsafe_b64encode(f"revreview-standin:{offset}".encode()).decode().rstrip("=")


def _offset(cursor: object) -> int | None:
    """The offset in a cursor this stand-in gave (0 for none); None for one it did not."""
    if cursor in (None, ""):
        return 0
    try:
        text = base64.urlsafe_b64decode(str(cursor) + "=" * (-len(str(cursor)) % 4)).decode()
        prefix, _, offset = text.partition(":")
        return int(offset) if prefix == "revreview-standin" else None
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


def _object(portal: Portal, object_type: str, rid: str, wanted: list[str]) -> dict:
    obj = portal.objects[object_type][rid]
    props = obj["properties"]
    shown = {p: props.get(p) for p in wanted if p not in portal.lacks.get(object_type, ())}
    shown.update({k: props[k] for k in ("hs_object_id", MODIFIED[object_type]) if k in props})
    shown["createdate"] = obj["createdAt"]
    out = {
        "id": rid,
        "properties": shown,
        "createdAt": obj["createdAt"],
        "updatedAt": obj["updatedAt"],
        "archived": obj["archived"],
    }
    if obj["archived"]:
        out["archivedAt"] = obj.get("archivedAt")
    return out


class StandIn:
    """The server on a free loopback port, in a thread: `with StandIn(portal) as api:`."""

    def __init__(self, portal: Portal) -> None:
        handler = type("Handler", (_Handler,), {"portal": portal})
        self.portal = portal
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = serving_thread(self.server)

    def __enter__(self) -> StandIn:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def serving(portal: Portal, settings) -> Iterator[StandIn]:
    """`portal` served on loopback with revreview's HubSpot settings (pytest-django's
    `settings`) pointed at it: backoffs of 10 ms, the portal's whole limit ours."""
    with StandIn(portal) as api:
        settings.HUBSPOT_API_BASE_URL = api.url
        settings.HUBSPOT_BACKOFF_SECONDS = 0.01
        settings.HUBSPOT_RATE_SHARE = 1.0
        yield api
