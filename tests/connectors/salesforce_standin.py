"""A loopback stand-in for Salesforce's REST API, written from Salesforce's documentation
(REST API Developer Guide: Query, QueryAll, QueryAll More Results, sObject Describe,
sObject Basic Information (create), Status Codes and Error Responses, Limit Info
Header; OAuth 2.0 Client Credentials Flow for Server-to-Server Integration).

Serves, on 127.0.0.1 and a free port, for the org of salesforce_org.py:
- POST /services/oauth2/token  (grant_type=client_credentials, client_id, client_secret;
  200 {"access_token", "instance_url", "id", "token_type": "Bearer", "issued_at",
  "signature", "scope"}; 400 {"error": "invalid_client", "error_description"} for
  credentials it does not know)
- GET  /services/data/vXX.X/sobjects/{name}/describe  ({"name", "fields": [{"name",
  "type", "label"}]}, less the fields the integration user cannot read: `org.hidden`)
- GET  /services/data/vXX.X/query?q=  and  /queryAll?q=  (SELECT fields FROM object
  [WHERE SystemModstamp > datetime AND Id > 'id' AND Field = 'text' AND Field = true]
  [ORDER BY Id]; query leaves deleted
  records out, queryAll keeps them; at most `page_size` records a page, then done false
  and a nextRecordsUrl /services/data/vXX.X/query/01g...-N, which both More Results
  resources answer; 400 INVALID_FIELD / MALFORMED_QUERY as Salesforce names them)
- POST /services/data/vXX.X/sobjects/Task  (201 {"id", "success": true, "errors": []};
  400 INVALID_CROSS_REFERENCE_KEY for a WhatId, WhoId or OwnerId it does not hold)
Each data answer carries `Sforce-Limit-Info: api-usage=USED/LIMIT`; past `daily_limit`
it answers 403 [{"message": "TotalRequests Limit exceeded.", "errorCode":
"REQUEST_LIMIT_EXCEEDED"}]. A session it did not issue, or one `expire_sessions` ended,
gets 401 [{"message": "Session expired or invalid", "errorCode": "INVALID_SESSION_ID"}].
`fail_next` queues status codes (401, 500, 503) to answer next; `refuse_after` answers
REQUEST_LIMIT_EXCEEDED once that many data requests were served (an interrupted pull);
`paths` lists every request's method and path."""

from __future__ import annotations

import json
import re
import threading
import uuid
from contextlib import contextmanager
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from tests.connectors.salesforce_org import FIELDS, PREFIX, Org, id18, read_datetime
from tests.loopback import serving_thread

CLIENT_ID = "3MVG9standin.consumer.key"
CLIENT_SECRET = "standin-consumer-secret"
_SOQL = re.compile(
    r"^SELECT (?P<fields>.+?) FROM (?P<object>\w+)(?: WHERE (?P<where>.+?))?(?: ORDER BY Id)?$"
)
_MODSTAMP = re.compile(r"^SystemModstamp > (\S+)$")
_AFTER_ID = re.compile(r"^Id > '([A-Za-z0-9]+)'$")
_EQUALS = re.compile(r"^(\w+) = (?:'((?:[^'\\]|\\.)*)'|(true|false))$")
_DECIMAL = "@@decimal@@"  # marks a Decimal's digits in the JSON text
_LINKS = {"WhatId": ("Account", "Opportunity"), "WhoId": ("Contact", "Lead"), "OwnerId": ("User",)}


class _Refusal(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


class Server:
    """The org's API state beside the org: sessions, the day's count, queued failures."""

    def __init__(self, org: Org) -> None:
        self.org = org
        self.page_size = 2000
        self.daily_limit = 15_000
        self.used = 0
        self.sessions: set[str] = set()
        self.tokens_issued = 0
        self.secret = CLIENT_SECRET
        self.fail_next: list[int] = []
        self.refuse_after: int | None = None
        self.paths: list[tuple[str, str]] = []
        self.locators: dict[str, list[dict]] = {}
        self.lock = threading.Lock()

    def expire_sessions(self) -> None:
        self.sessions.clear()


class _Handler(BaseHTTPRequestHandler):
    state: Server
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        self._answer("GET")

    def do_POST(self) -> None:
        self._answer("POST")

    def _answer(self, method: str) -> None:
        state = self.state
        url = urlparse(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        with state.lock:
            state.paths.append((method, url.path))
            if url.path == "/services/oauth2/token" and method == "POST":
                status, answer = self._token(parse_qs(body.decode()))
                return self._send(status, answer)
            status, answer = self._data(method, url, body)
            self._send(status, answer, usage=True)

    def _token(self, form: dict) -> tuple[int, dict]:
        state = self.state
        given = {k: v[0] for k, v in form.items()}
        if given.get("grant_type") != "client_credentials":
            return 400, _oauth_error("unsupported_grant_type", "grant type not supported")
        if given.get("client_id") != CLIENT_ID or given.get("client_secret") != state.secret:
            return 400, _oauth_error("invalid_client", "invalid client credentials")
        token = f"00D!{uuid.uuid4().hex}"
        state.sessions.add(token)
        state.tokens_issued += 1
        host = f"http://127.0.0.1:{self.server.server_address[1]}"
        return 200, {
            "access_token": token,
            "signature": "c3RhbmQtaW4=",
            "scope": "api",
            "instance_url": host,
            "id": f"{host}/id/{state.org.org_id}/005000000000001AAA",
            "token_type": "Bearer",
            "issued_at": "1777716000000",
        }

    def _data(self, method: str, url, body: bytes) -> tuple[int, object]:
        state = self.state
        token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
        if token not in state.sessions:
            return 401, _errors("INVALID_SESSION_ID", "Session expired or invalid")
        state.used += 1
        if state.used > state.daily_limit or (
            state.refuse_after is not None and state.used > state.refuse_after
        ):
            return 403, _errors("REQUEST_LIMIT_EXCEEDED", "TotalRequests Limit exceeded.")
        if state.fail_next:
            status = state.fail_next.pop(0)
            if status == 401:  # the session ended on Salesforce's side
                return status, _errors("INVALID_SESSION_ID", "Session expired or invalid")
            return status, _errors("SERVER_UNAVAILABLE", "Service unavailable")
        parts = url.path.split("/")  # "", services, data, vXX.X, resource...
        if parts[:3] != ["", "services", "data"] or not re.fullmatch(r"v\d+\.\d", parts[3]):
            return 404, _errors("NOT_FOUND", "The requested resource does not exist")
        rest = parts[4:]
        try:
            if method == "GET" and rest[:1] == ["sobjects"] and rest[2:] == ["describe"]:
                return 200, self._describe(rest[1])
            if method == "GET" and rest[:1] in (["query"], ["queryAll"]) and len(rest) == 2:
                return 200, self._more(parts[3], rest[1])
            if method == "GET" and rest in (["query"], ["queryAll"]):
                soql = parse_qs(url.query).get("q", [""])[0]
                return 200, self._query(parts[3], soql, deleted=rest == ["queryAll"])
            if method == "POST" and rest == ["sobjects", "Task"]:
                return 201, self._create_task(json.loads(body or b"{}"))
        except _Refusal as refusal:
            return refusal.status, _errors(refusal.code, refusal.message)
        return 404, _errors("NOT_FOUND", "The requested resource does not exist")

    def _describe(self, sobject: str) -> dict:
        if sobject not in FIELDS:
            raise _Refusal(404, "NOT_FOUND", f"The requested resource does not exist: {sobject}")
        hidden = self.state.org.hidden.get(sobject, set())
        fields = [
            {"name": name, "type": kind, "label": name}
            for name, kind in FIELDS[sobject].items()
            if name not in hidden
        ]
        return {"name": sobject, "queryable": True, "fields": fields}

    def _query(self, version: str, soql: str, *, deleted: bool) -> dict:
        org = self.state.org
        found = _SOQL.match(soql)
        if not found:
            raise _Refusal(400, "MALFORMED_QUERY", f"unexpected token in: {soql[:80]}")
        sobject = found["object"]
        fields = [f.strip() for f in found["fields"].split(",")]
        if sobject == "Organization":
            row = {"Id": org.org_id, "Name": "Acme (stand-in)", "DefaultCurrencyIsoCode":
                   org.currency, "TimeZoneSidKey": "Europe/Paris", "IsSandbox": False,
                   "OrganizationType": "Enterprise Edition"}  # fmt: skip
            return self._page(version, [_shown("Organization", row, fields)])
        known = set(FIELDS.get(sobject, {})) - org.hidden.get(sobject, set())
        if sobject not in FIELDS:
            raise _Refusal(400, "INVALID_TYPE", f"sObject type '{sobject}' is not supported.")
        for name in fields:
            if name not in known:
                message = f"No such column '{name}' on entity '{sobject}'."
                raise _Refusal(400, "INVALID_FIELD", message)
        rows = sorted(org.records[sobject].values(), key=lambda r: r["Id"])
        if not deleted:
            rows = [r for r in rows if not r.get("IsDeleted")]
        for condition in (found["where"] or "").split(" AND ") if found["where"] else []:
            if match := _MODSTAMP.match(condition):
                since = read_datetime(match[1])
                rows = [r for r in rows if read_datetime(r["SystemModstamp"]) > since]
            elif match := _AFTER_ID.match(condition):
                rows = [r for r in rows if r["Id"] > match[1]]
            elif match := _EQUALS.match(condition):
                name, text, flag = match[1], match[2], match[3]
                if name not in known:
                    raise _Refusal(400, "INVALID_FIELD", f"No such column '{name}'.")
                wanted = _unescaped(text) if flag is None else flag == "true"
                rows = [r for r in rows if r.get(name) == wanted]
            else:
                raise _Refusal(400, "MALFORMED_QUERY", f"unexpected condition: {condition[:80]}")
        return self._page(version, [_shown(sobject, r, fields) for r in rows])

    def _page(self, version: str, rows: list[dict], offset: int = 0, locator: str = "") -> dict:
        size = self.state.page_size
        page = rows[offset : offset + size]
        answer = {"totalSize": len(rows), "done": offset + size >= len(rows), "records": page}
        if not answer["done"]:
            locator = locator or f"01g{uuid.uuid4().hex[:12]}"
            self.state.locators[locator] = rows
            answer["nextRecordsUrl"] = f"/services/data/{version}/query/{locator}-{offset + size}"
        return answer

    def _more(self, version: str, cursor: str) -> dict:
        locator, _, offset = cursor.rpartition("-")
        rows = self.state.locators.get(locator)
        if rows is None or not offset.isdigit():
            raise _Refusal(400, "INVALID_QUERY_LOCATOR", "invalid query locator")
        return self._page(version, rows, int(offset), locator)

    def _create_task(self, fields: dict) -> dict:
        org = self.state.org
        if not str(fields.get("Subject") or "").strip():
            raise _Refusal(400, "REQUIRED_FIELD_MISSING", "Required fields are missing: [Subject]")
        for name, objects in _LINKS.items():
            value = fields.get(name)
            if value is not None and not any(value in org.records[o] for o in objects):
                raise _Refusal(
                    400, "INVALID_CROSS_REFERENCE_KEY", f"invalid cross reference id: {name}"
                )
        if not (fields.get("WhatId") or fields.get("WhoId")):
            raise _Refusal(400, "FIELD_INTEGRITY_EXCEPTION", "a task needs WhatId or WhoId")
        org.serial += 1
        task_id = id18(f"{PREFIX['Task']}5g00000{org.serial:05d}")
        org.tasks[task_id] = dict(fields)
        return {"id": task_id, "success": True, "errors": []}

    def _send(self, status: int, answer: object, *, usage: bool = False) -> None:
        text = json.dumps(answer, default=_number)
        data = re.sub(f'"{_DECIMAL}(.*?){_DECIMAL}"', r"\1", text).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json;charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        if usage:
            state = self.state
            self.send_header("Sforce-Limit-Info", f"api-usage={state.used}/{state.daily_limit}")
        self.end_headers()
        self.wfile.write(data)


def _unescaped(text: str) -> str:
    """A SOQL string literal's text: \\n, \\t, \\r, and a backslash before anything else."""
    named = {"n": "\n", "t": "\t", "r": "\r"}
    return re.sub(r"\\(.)", lambda m: named.get(m[1], m[1]), text)


def _errors(code: str, message: str) -> list[dict]:
    """Salesforce's error body: a list of {"message", "errorCode"}."""
    return [{"message": message, "errorCode": code}]


def _oauth_error(code: str, description: str) -> dict:
    return {"error": code, "error_description": description}


def _shown(sobject: str, row: dict, fields: list[str]) -> dict:
    rid = row.get("Id")
    attributes = {"type": sobject, "url": f"/services/data/v62.0/sobjects/{sobject}/{rid}"}
    return {"attributes": attributes, **{name: row.get(name) for name in fields}}


def _number(value: object) -> object:
    if isinstance(value, Decimal):  # written as its digits, never through a float
        return f"{_DECIMAL}{value}{_DECIMAL}"
    raise TypeError(type(value).__name__)


class StandIn:
    """The server on a free loopback port, in a thread: `with StandIn(org) as api:`."""

    def __init__(self, org: Org) -> None:
        self.state = Server(org)
        handler = type("Handler", (_Handler,), {"state": self.state})
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
def serving(org: Org, settings):
    """`org` served on loopback, with backoffs of 10 ms and no floor in the way."""
    with StandIn(org) as api:
        settings.SALESFORCE_BACKOFF_SECONDS = 0.01
        settings.SALESFORCE_DAILY_FLOOR = 0
        yield api


def credentials_for(api: StandIn, secret: str = CLIENT_SECRET) -> dict:
    return {"domain": api.url, "client_id": CLIENT_ID, "client_secret": secret}
