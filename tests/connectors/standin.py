"""A loopback stand-in for the HubSpot API, written from HubSpot's documented behaviour.

Serves, on 127.0.0.1 and a free port:
- GET  /account-info/v3/details
- GET  /crm/v3/objects/{type}?limit&after&properties&archived  (<= 100 a page, `after`)
- POST /crm/v3/objects/{type}/search  (GTE filter on a date property, one ascending sort,
  <= 200 a page; 400 past the 10,000th result; its own per-second limit, no headers)
- POST /crm/v4/associations/{from}/{to}/batch/read  (<= 1,000 inputs)
- GET  /crm/v3/pipelines/deals
- POST /crm/v3/objects/{type}/merge  ({"primaryObjectId", "objectIdToMerge"}: Portal.merge,
  200 with the surviving object; 400 when either record is not there, e.g. merged already)
Every other answer carries X-HubSpot-RateLimit-{Daily,Daily-Remaining,
Interval-Milliseconds,Max,Remaining}; past `max_per_interval` requests in a rolling
interval it answers 429 with HubSpot's body (policyName TEN_SECONDLY_ROLLING). A wrong
or revoked token gets 401 with HubSpot's body. `fail_next` queues status codes to answer
next (500, 502, 503, 429), `revoke_after` revokes the token after that many requests,
`slow_next` holds the next answers that many seconds each after doing the work (a client
that gives up first has had its request carried out all the same). `merges` lists the
merges done, (type, primary, merged)."""

from __future__ import annotations

import bisect
import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

MODIFIED = {
    "companies": "hs_lastmodifieddate",
    "contacts": "lastmodifieddate",
    "deals": "hs_lastmodifieddate",
}
SEARCH_CAP = 10_000


class Portal:
    def __init__(self, *, portal_id: int = 4242, token: str = "pat-na1-good") -> None:
        self.portal_id = portal_id
        self.tokens = {token}
        self.objects: dict[str, dict[str, dict]] = {"companies": {}, "contacts": {}, "deals": {}}
        self.links: dict[tuple[str, str], dict[str, list[tuple[str, bool]]]] = {}
        self.pipelines: list[dict] = [_default_pipeline()]
        self.clock_ms = int(time.time() * 1000) - 3_600_000
        self._sorted: dict = {}
        self.lock = threading.Lock()
        # limits
        self.max_per_interval = 190
        self.interval_ms = 10_000
        self.daily = 500_000
        self.daily_used = 0
        self.search_per_second = 5
        self.sent: deque[float] = deque()
        self.searches: deque[float] = deque()
        # faults and counts
        self.fail_next: list[int] = []
        self.retry_after: str | None = None
        self.revoke_after: int | None = None
        self.requests = 0
        self.log: list[tuple[str, str, int]] = []  # (method, path, status)
        self.slow_next: list[float] = []
        self.merges: list[tuple[str, str, str]] = []
        # Properties this portal does not have, by type: HubSpot leaves a property it
        # does not know out of its answer (no error), as a portal without it would.
        self.lacks: dict[str, set[str]] = {}

    # --- changing the portal ----------------------------------------------------------

    def tick(self) -> str:
        self.clock_ms += 1
        return str(self.clock_ms)

    def put(self, object_type: str, rid: str, props: dict, *, stamp: str | None = None) -> None:
        stamp = stamp or self.tick()
        self._sorted.clear()
        current = self.objects[object_type].get(rid)
        merged = dict(current["properties"]) if current else {}
        merged.update(props)
        merged[MODIFIED[object_type]] = stamp
        merged["hs_object_id"] = rid
        self.objects[object_type][rid] = {
            "properties": merged,
            "archived": False,
            "createdAt": current["createdAt"] if current else _iso(int(stamp)),
            "updatedAt": _iso(int(stamp)),
        }

    def link(
        self, from_type: str, rid: str, to_type: str, to_id: str, *, primary: bool = False
    ) -> None:
        found = self.links.setdefault((from_type, to_type), {}).setdefault(rid, [])
        found[:] = [pair for pair in found if pair[0] != to_id]
        if primary:
            found[:] = [(t, False) for t, _ in found]
        found.append((to_id, primary))

    def archive(self, object_type: str, rid: str) -> None:
        """Archiving does not change the modified date (so search does not see it)."""
        self.objects[object_type][rid]["archived"] = True
        self._sorted.clear()
        self.objects[object_type][rid]["archivedAt"] = _iso(self.clock_ms)

    def merge(self, object_type: str, primary: str, merged: str) -> None:
        """The merged-away record is gone; the survivor lists it and is modified; what was
        associated with it is associated with the survivor (and is not modified)."""
        gone = self.objects[object_type].pop(merged)
        self._sorted.clear()
        for (from_type, _to_type), links in self.links.items():
            if from_type == object_type and merged in links:
                for to_id, _ in links.pop(merged):
                    if all(t != to_id for t, _ in links.get(primary, [])):
                        links.setdefault(primary, []).append((to_id, False))
        for (_from_type, to_type), links in self.links.items():  # what pointed at it
            if to_type != object_type:
                continue
            for found in links.values():
                if any(t == merged for t, _ in found):
                    was_primary = any(t == merged and p for t, p in found)
                    found[:] = [(t, p) for t, p in found if t not in (merged, primary)]
                    found.append((primary, was_primary))
        ids = gone["properties"].get("hs_merged_object_ids", "")
        mine = self.objects[object_type][primary]["properties"].get("hs_merged_object_ids", "")
        both = ";".join(p for p in (mine, merged, ids) if p)
        self.put(object_type, primary, {"hs_merged_object_ids": both})

    def sorted_ids(self, object_type: str, archived: bool) -> tuple[list[str], list[int]]:
        """(ids, their numbers) in id order; kept until the portal changes."""
        key = (object_type, archived)
        if key not in self._sorted:
            objects = self.objects[object_type]
            ids = sorted((i for i, o in objects.items() if o["archived"] == archived), key=int)
            self._sorted[key] = (ids, [int(i) for i in ids])
        return self._sorted[key]

    def live(self, object_type: str) -> list[str]:
        return sorted(
            (i for i, o in self.objects[object_type].items() if not o["archived"]), key=int
        )

    # --- answering ------------------------------------------------------------------------

    def limit_headers(self) -> dict[str, str]:
        return {
            "X-HubSpot-RateLimit-Daily": str(self.daily),
            "X-HubSpot-RateLimit-Daily-Remaining": str(max(self.daily - self.daily_used, 0)),
            "X-HubSpot-RateLimit-Interval-Milliseconds": str(self.interval_ms),
            "X-HubSpot-RateLimit-Max": str(self.max_per_interval),
            "X-HubSpot-RateLimit-Remaining": str(max(self.max_per_interval - len(self.sent), 0)),
        }


def _iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"


def _default_pipeline() -> dict:
    stages = [
        ("appointmentscheduled", "Appointment scheduled", "false", "0.2"),
        ("qualifiedtobuy", "Qualified to buy", "false", "0.4"),
        ("contractsent", "Contract sent", "false", "0.9"),
        ("closedwon", "Closed won", "true", "1.0"),
        ("closedlost", "Closed lost", "true", "0.0"),
    ]
    return {
        "id": "default",
        "label": "Sales Pipeline",
        "displayOrder": 0,
        "archived": False,
        "stages": [
            {
                "id": sid,
                "label": label,
                "displayOrder": n,
                "archived": False,
                "metadata": {"isClosed": closed, "probability": p},
            }
            for n, (sid, label, closed, p) in enumerate(stages)
        ],
    }


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
        after = int(body.get("after") or 0)
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
            out["paging"] = {"next": {"after": str(after + limit)}}
        return 200, out

    def _merge(self, portal: Portal, object_type: str, body: dict):
        primary, merged = str(body["primaryObjectId"]), str(body["objectIdToMerge"])
        objects = portal.objects[object_type]
        for rid in (primary, merged):
            if rid not in objects or objects[rid]["archived"] or primary == merged:
                return 400, _error(f"Object {rid} cannot be merged", "VALIDATION_ERROR")
        portal.merge(object_type, primary, merged)
        portal.merges.append((object_type, primary, merged))
        return 200, _object(portal, object_type, primary, list(objects[primary]["properties"]))

    def _links(self, portal: Portal, from_type: str, to_type: str, body: dict):
        inputs = body["inputs"]
        if len(inputs) > 1000:
            return 400, _error("Too many inputs: the limit is 1000", "VALIDATION_ERROR")
        links = portal.links.get((from_type, to_type), {})
        results = []
        for item in inputs:
            found = links.get(str(item["id"]))
            if not found:
                continue
            results.append(
                {
                    "from": {"id": str(item["id"])},
                    "to": [
                        {
                            "toObjectId": int(to_id),
                            "associationTypes": (
                                [{"category": "HUBSPOT_DEFINED", "typeId": 5, "label": "Primary"}]
                                if primary
                                else []
                            )
                            + [{"category": "HUBSPOT_DEFINED", "typeId": 341, "label": None}],
                        }
                        for to_id, primary in found
                    ],
                }
            )
        return 200, {
            "status": "COMPLETE",
            "results": results,
            "startedAt": _iso(portal.clock_ms),
            "completedAt": _iso(portal.clock_ms),
        }


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
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

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
