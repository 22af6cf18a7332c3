"""A loopback stand-in of HubSpot's merge endpoint, POST /crm/v3/objects/{type}/merge,
over a native batch (tests.engine.ingest.hubspot_exports.BATCH): a merge removes the merged
record and moves its associations to the survivor, as HubSpot does, so the batch it holds
afterwards is what the next pull would read. Merging deals makes a new deal with a new
id (HubSpot's changelog, "Deals now support merging"): the primary's fields, both
records' contacts; both old ids become aliases that later requests may name. It can hold
its first answer back past the client's timeout (having merged all the same), the
failure a retry must survive.

It also answers the reads a merge's snapshot makes first (connectors/hubspot/records.py):
`GET /crm/v3/properties/{type}` (the batch's fields; hs_object_id read-only),
`POST /crm/v3/objects/{type}/batch/read` and the v4 association batch read (from the
records' companyId / companyIds / contactIds, either way). Those are not in `requests`."""

from __future__ import annotations

import copy
import itertools
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.loopback import serving_thread

_PATH = re.compile(r"^/crm/v3/objects/(companies|contacts|deals)/merge$")
_PROPERTIES = re.compile(r"^/crm/v3/properties/(companies|contacts|deals)$")
_READ = re.compile(r"^/crm/v3/objects/(companies|contacts|deals)/batch/read$")
_LINKS = re.compile(
    r"^/crm/v4/associations/(companies|contacts|deals)/(companies|contacts|deals)/batch/read$"
)  # noqa: E501
_LINK_FIELDS = {"id", "companyId", "companyIds", "contactIds"}


class HubSpotStandIn:
    def __init__(
        self, batch: dict, *, token: str, slow_first_s: float = 0.0, portal: str = "4512345"
    ) -> None:
        self.batch = copy.deepcopy(batch)
        self.portal = portal
        self.token = token
        self.slow_first_s = slow_first_s
        self.requests: list[tuple[str, dict]] = []  # (object type, body) of every request
        self.merged: list[tuple[str, str, str]] = []  # (object type, primary, merged)
        self.aliases: dict[str, str] = {}  # a deal id a merge replaced -> the new deal
        self._new_deal_ids = itertools.count(5901)
        self.arrived: list[float] = []  # time.monotonic() of every request
        self._lock = threading.Lock()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # the account the token opens, the properties
                ok = self.headers.get("Authorization", "") == f"Bearer {stand_in.token}"
                props = _PROPERTIES.match(self.path)
                found = self.path == "/account-info/v3/details" or props
                status = 200 if ok and found else (401 if not ok else 404)
                answer = {"portalId": int(stand_in.portal), "accountType": "STANDARD"}
                if props:
                    answer = stand_in.properties(props.group(1))
                data = json.dumps(answer if status == 200 else {"status": "error"}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
                status, answer, delay = stand_in.handle(
                    self.path, self.headers.get("Authorization", ""), body
                )
                time.sleep(delay)
                data = json.dumps(answer).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting: the merge is done all the same

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = serving_thread(self.server)

    def __enter__(self) -> HubSpotStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def properties(self, kind: str) -> dict:
        names = {k for r in self.batch[kind] for k in r if k not in _LINK_FIELDS}
        defined = [{"name": n, "modificationMetadata": {"readOnlyValue": False}} for n in names]
        defined.append({"name": "hs_object_id", "modificationMetadata": {"readOnlyValue": True}})
        return {"results": defined}

    def read(self, path: str, body: dict) -> dict | None:
        """The snapshot's reads, or None for another path."""
        if match := _READ.match(path):
            kind = match.group(1)
            records = {r["id"]: r for r in self.batch[kind]}
            ids = [str(i["id"]) for i in body["inputs"]]
            results = [
                {"id": rid, "archived": False,
                 "properties": {k: v for k, v in records[rid].items() if k not in _LINK_FIELDS}}
                for rid in ids if rid in records
            ]  # fmt: skip
            return {"status": "COMPLETE", "results": results}
        if match := _LINKS.match(path):
            from_type, to_type = match.groups()
            results = []
            for item in body["inputs"]:
                found = self._linked(from_type, str(item["id"]), to_type)
                if found:
                    to = [{"toObjectId": int(t), "associationTypes": [
                        {"category": "HUBSPOT_DEFINED", "typeId": 1, "label": None}]}
                        for t in found]  # fmt: skip
                    results.append({"from": {"id": str(item["id"])}, "to": to})
            return {"status": "COMPLETE", "results": results}
        return None

    def _linked(self, from_type: str, rid: str, to_type: str) -> list[str]:
        def ids_of(record: dict, kind: str) -> list[str]:
            if kind == "companies":
                return list(dict.fromkeys([*record.get("companyIds", []), record.get("companyId")]))
            return list(record.get("contactIds", [])) if kind == "contacts" else []

        record = next((r for r in self.batch[from_type] if r["id"] == rid), None)
        own = [i for i in ids_of(record, to_type) if i] if record else []
        back = [r["id"] for r in self.batch[to_type] if rid in ids_of(r, from_type)]
        return list(dict.fromkeys(own + back))

    def handle(self, path: str, authorization: str, body: dict) -> tuple[int, dict, float]:
        match = _PATH.match(path)
        if authorization != f"Bearer {self.token}":
            return 401, {"status": "error", "category": "INVALID_AUTHENTICATION"}, 0
        with self._lock:
            read = self.read(path, body)
        if read is not None:
            return 200, read, 0.0
        if not match:
            return 404, {"status": "error", "message": f"no route {path}"}, 0
        kind = match.group(1)
        with self._lock:
            self.arrived.append(time.monotonic())
            self.requests.append((kind, body))
            first = len(self.requests) == 1
            primary, merged = str(body.get("primaryObjectId")), str(body.get("objectIdToMerge"))
            if kind == "deals":  # an old id reaches the deal it was merged into
                primary, merged = self.current(primary), self.current(merged)
            records = {r["id"]: r for r in self.batch[kind]}
            if primary not in records or merged not in records or primary == merged:
                return 400, {"status": "error", "category": "VALIDATION_ERROR",
                             "message": f"cannot merge {merged} into {primary}"}, 0  # fmt: skip
            survivor = self._merge(kind, primary, merged)
            self.merged.append((kind, primary, merged))
            record = next(r for r in self.batch[kind] if r["id"] == survivor)
            answer = {"id": survivor, "properties": record, "archived": False}
        return 200, answer, self.slow_first_s if first else 0.0

    def current(self, deal_id: str) -> str:
        while deal_id in self.aliases:
            deal_id = self.aliases[deal_id]
        return deal_id

    def _merge(self, kind: str, primary: str, merged: str) -> str:
        """The survivor's id: the primary's, or a new deal's."""
        if kind == "deals":
            return self._merge_deals(primary, merged)
        self.batch[kind] = [r for r in self.batch[kind] if r["id"] != merged]
        if kind == "companies":
            for record in (*self.batch["contacts"], *self.batch["deals"]):
                if record.get("companyId") == merged:
                    record["companyId"] = primary
                if "companyIds" in record:
                    ids = [primary if i == merged else i for i in record["companyIds"]]
                    record["companyIds"] = list(dict.fromkeys(ids))
        elif kind == "contacts":
            for deal in self.batch["deals"]:
                ids = [primary if i == merged else i for i in deal.get("contactIds", [])]
                deal["contactIds"] = list(dict.fromkeys(ids))
        return primary

    def _merge_deals(self, primary: str, merged: str) -> str:
        deals = {r["id"]: r for r in self.batch["deals"]}
        kept, gone = deals[primary], deals[merged]
        survivor = str(next(self._new_deal_ids))
        record = {**{k: v for k, v in gone.items() if v not in (None, "")}, **kept}
        record["id"] = survivor
        contacts = [*kept.get("contactIds", []), *gone.get("contactIds", [])]
        if contacts:
            record["contactIds"] = list(dict.fromkeys(contacts))
        self.batch["deals"] = [r for r in self.batch["deals"] if r["id"] not in (primary, merged)]
        self.batch["deals"].append(record)
        self.aliases[primary] = self.aliases[merged] = survivor
        return survivor
