"""Every URL pattern and every API route, walked as a member of workspace A, a member
of workspace B, a superuser and anonymous: B never reads, lists, exports, re-runs or
dismisses A's data (404/403, or a list without it); A and the superuser can.

A URL pattern or API route added without a line in ROUTES fails this test: say who may
reach it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from reviews.models import Batch, Dismissal, RuleSet
from reviews.web.api.api import api
from tests.engine.ingest.renewals_portal import pipelines_response
from tests.uploads import upload
from tests.workspaces.conftest import A_AGENT, A_DATASET, A_RULE_SET, World

pytestmark = [pytest.mark.django_db, pytest.mark.own_workspaces]

ACTORS = ("alice", "bob", "root", "anon")

# What a route is, for the walk:
OBJECT = "object"  # reads one of A's rows: A and root 200, B 404
ACTION = "action"  # acts on one of A's rows (POST): A and root may, B 404
LIST = "list"  # a page of the user's rows: everyone 200, B's without A's marker
PUBLIC = "public"  # holds no workspace data (sign-in, the API schema)
UPLOAD = "upload"  # adds a batch: it lands in the actor's own workspace
OWN = "own"  # writes a row of the actor's own workspace (a rule set): never of A's for B


# A team rule the walk previews, adds and removes (docs/rules.md#a-teams-own-rules).
WALK_RULE = {
    "id": "walk_rule",
    "object": "deals",
    "severity": "warning",
    "title": "walk",
    "fix": "walk",
    "when": "amount IS NULL",
}


@dataclass(frozen=True)
class Route:
    kind: str
    url: Callable[[World], str]
    method: str = "get"
    data: Callable[[World], dict] | None = None
    marker: Callable[[World], str] | None = None  # what of A's a LIST must not show B
    personal: bool = False  # alice's own (her tokens): the superuser is an outsider too
    # What A's member may get: reaching the row is what is walked, so a route whose
    # content the world cannot make valid (no proposal to apply) may refuse it (400).
    reached: tuple[int, ...] = (200, 201, 202, 302)


def _connected(w: World, url: str) -> str:
    """A's dataset with a HubSpot connection (to nowhere: tests.settings), so a pull of it
    can be asked for (it is queued; no test worker runs it)."""
    from connectors import tokens
    from connectors.models import Connection
    from reviews.models import Dataset

    if not hasattr(w, "a"):  # the walk's list of routes, made without a world
        return url
    dataset = Dataset.objects.get(workspace=w.a, name=A_DATASET)
    Connection.objects.get_or_create(
        dataset=dataset, defaults={"token_sealed": tokens.encrypt("pat-walk"), "portal_id": "1"}
    )
    return url


def run_link(w: World) -> str:
    return f"/runs/{w.run_a.pk}/"


ROUTES: dict[str, Route] = {
    # --- the dashboard ---------------------------------------------------------------
    "reviews:home": Route(LIST, lambda w: "/", marker=lambda w: f"/datasets/{A_DATASET}/"),
    "reviews:upload": Route(LIST, lambda w: "/upload/", marker=run_link),
    "reviews:batch": Route(OBJECT, lambda w: f"/batches/{w.run_a.batch_id}/"),
    "reviews:runs": Route(LIST, lambda w: "/runs/", marker=run_link),
    "reviews:run": Route(OBJECT, lambda w: f"/runs/{w.run_a.pk}/"),
    "reviews:findings_csv": Route(OBJECT, lambda w: f"/runs/{w.run_a.pk}/findings.csv"),
    "reviews:run_json": Route(OBJECT, lambda w: f"/runs/{w.run_a.pk}.json"),
    "reviews:dataset": Route(OBJECT, lambda w: f"/datasets/{A_DATASET}/"),
    "reviews:dataset_pipelines": Route(
        ACTION, lambda w: f"/datasets/{A_DATASET}/pipelines/", "post"
    ),
    "reviews:dataset_tuning": Route(OBJECT, lambda w: f"/datasets/{A_DATASET}/tuning/"),
    "reviews:apply_proposal": Route(
        ACTION,
        lambda w: f"/datasets/{A_DATASET}/tuning/apply/",
        "post",
        data=lambda w: {"proposal": "none-made", "reason": "walk"},
    ),
    "reviews:dismiss_proposal": Route(
        ACTION,
        lambda w: f"/datasets/{A_DATASET}/tuning/dismiss/",
        "post",
        data=lambda w: {"proposal": "none-made", "reason": "walk"},
    ),
    "reviews:restore_policy": Route(
        ACTION,
        lambda w: f"/datasets/{A_DATASET}/policy/restore/",
        "post",
        data=lambda w: {"version": "0", "reason": "walk"},
    ),
    "reviews:dataset_rules": Route(OBJECT, lambda w: f"/datasets/{A_DATASET}/rules/"),
    "reviews:dataset_rules_preview": Route(
        ACTION, lambda w: f"/datasets/{A_DATASET}/rules/preview/", "post", data=lambda w: WALK_RULE
    ),
    "reviews:dataset_rules_add": Route(
        ACTION, lambda w: f"/datasets/{A_DATASET}/rules/add/", "post", data=lambda w: WALK_RULE
    ),
    "reviews:dataset_rules_remove": Route(
        ACTION,
        lambda w: f"/datasets/{A_DATASET}/rules/remove/",
        "post",
        data=lambda w: {"id": "walk_rule"},
    ),
    "reviews:dataset_connect": Route(
        ACTION,
        lambda w: f"/datasets/{A_DATASET}/hubspot/connect/",
        "post",
        data=lambda w: {"token": "pat-walk", "every_hours": 24},
    ),
    "reviews:dataset_pull": Route(ACTION, lambda w: f"/datasets/{A_DATASET}/hubspot/pull/", "post"),
    "reviews:dataset_schedule": Route(
        ACTION,
        lambda w: f"/datasets/{A_DATASET}/hubspot/schedule/",
        "post",
        data=lambda w: {"every_hours": 12},
    ),
    "reviews:rerun": Route(ACTION, lambda w: f"/runs/{w.run_a.pk}/rerun/", "post"),
    "reviews:break_glass": Route(
        ACTION,
        lambda w: f"/runs/{w.run_a.pk}/break-glass/",
        "post",
        data=lambda w: {"reason": "ship it"},
    ),
    "reviews:dismiss": Route(
        ACTION,
        lambda w: f"/runs/{w.run_a.pk}/findings/{w.finding_a.pk}/dismiss/",
        "post",
        data=lambda w: {"reason": "not ours"},
    ),
    "reviews:undo_dismissal": Route(
        ACTION, lambda w: f"/runs/{w.run_a.pk}/findings/{w.dismissed_a.pk}/undo/", "post"
    ),
    "reviews:fix_plan": Route(OBJECT, lambda w: f"/runs/{w.run_a.pk}/fix-plan/"),
    "reviews:fix_plan_json": Route(OBJECT, lambda w: f"/runs/{w.run_a.pk}/fix-plan.json"),
    "reviews:merges_csv": Route(OBJECT, lambda w: f"/runs/{w.run_a.pk}/merges.csv"),
    "reviews:tasks_csv": Route(OBJECT, lambda w: f"/runs/{w.run_a.pk}/tasks.csv"),
    "reviews:salesforce_merges_csv": Route(
        OBJECT, lambda w: f"/runs/{w.run_a.pk}/salesforce-merges.csv"
    ),
    "reviews:apply_merges": Route(OBJECT, lambda w: f"/runs/{w.run_a.pk}/merges/apply/"),
    "reviews:send_tasks": Route(OBJECT, lambda w: f"/runs/{w.run_a.pk}/tasks/send/"),
    "reviews:applied_merges": Route(OBJECT, lambda w: f"/datasets/{A_DATASET}/merges/"),
    "reviews:tokens": Route(
        LIST, lambda w: "/settings/tokens/", marker=lambda w: "alpha nightly", personal=True
    ),
    "reviews:token_revoke": Route(
        ACTION, lambda w: f"/settings/tokens/{w.token_a.pk}/revoke/", "post", personal=True
    ),
    "ledger:spend": Route(LIST, lambda w: "/spend/", marker=lambda w: A_AGENT),
    "login": Route(PUBLIC, lambda w: "/accounts/login/"),
    "logout": Route(PUBLIC, lambda w: "/accounts/logout/"),
    "password_change": Route(PUBLIC, lambda w: "/accounts/password_change/"),
    "password_change_done": Route(PUBLIC, lambda w: "/accounts/password_change/done/"),
    "favicon.ico": Route(PUBLIC, lambda w: "/favicon.ico"),
    # Prometheus's, by METRICS_TOKEN, never a member's session: 404 here (no token set);
    # tests/revreview/test_metrics.py has it refused without the token.
    "metrics": Route(PUBLIC, lambda w: "/metrics"),
    # --- the API ---------------------------------------------------------------------
    "api:openapi-json": Route(PUBLIC, lambda w: "/api/v1/openapi.json"),
    "api:openapi-view": Route(PUBLIC, lambda w: "/api/v1/docs"),
    "api:api-root": Route(PUBLIC, lambda w: "/api/v1/"),
    "api:batches": Route(UPLOAD, lambda w: "/api/v1/batches", "post"),
    "api:run": Route(OBJECT, lambda w: f"/api/v1/runs/{w.run_a.pk}"),
    "api:runs": Route(LIST, lambda w: "/api/v1/runs", marker=lambda w: f'"id": {w.run_a.pk},'),
    "api:rerun": Route(ACTION, lambda w: f"/api/v1/runs/{w.run_a.pk}/rerun", "post"),
    "api:fix_plan": Route(OBJECT, lambda w: f"/api/v1/runs/{w.run_a.pk}/fix-plan"),
    "api:undo_dry_run": Route(OBJECT, lambda w: f"/api/v1/runs/{w.run_a.pk}/merges/undo"),
    # A's dataset has no HubSpot connection here: reaching it is what is walked (400).
    "api:undo": Route(
        ACTION,
        lambda w: f"/api/v1/runs/{w.run_a.pk}/merges/undo",
        "post",
        data=lambda w: {"fingerprints": None},
        reached=(400,),
    ),
    "api:dataset": Route(OBJECT, lambda w: f"/api/v1/datasets/{A_DATASET}"),
    "api:dataset_pull": Route(
        ACTION, lambda w: _connected(w, f"/api/v1/datasets/{A_DATASET}/pull"), "post"
    ),
    "api:dismissals": Route(
        ACTION,
        lambda w: f"/api/v1/datasets/{A_DATASET}/dismissals",
        "post",
        data=lambda w: {"fingerprint": w.finding_a.fingerprint, "reason": "not ours"},
    ),
    "api:dismissal": Route(
        ACTION,
        lambda w: f"/api/v1/datasets/{A_DATASET}/dismissals/{w.dismissed_a.fingerprint}",
        "delete",
    ),
    "api:dataset_tuning": Route(OBJECT, lambda w: f"/api/v1/datasets/{A_DATASET}/tuning"),
    "api:dataset_policy_apply": Route(
        ACTION,
        lambda w: f"/api/v1/datasets/{A_DATASET}/policy/apply",
        "post",
        data=lambda w: {"proposal": "none-made", "reason": "walk"},
        reached=(400,),
    ),
    "api:dataset_policy_restore": Route(
        ACTION,
        lambda w: f"/api/v1/datasets/{A_DATASET}/policy/restore",
        "post",
        data=lambda w: {"version": 0, "reason": "walk"},
    ),
    "api:dataset_rules": Route(OBJECT, lambda w: f"/api/v1/datasets/{A_DATASET}/rules"),
    "api:dataset_rules_add": Route(
        ACTION,
        lambda w: f"/api/v1/datasets/{A_DATASET}/rules",
        "post",
        data=lambda w: {"rules": [WALK_RULE], "reason": "walk"},
    ),
    "api:dataset_rules_preview": Route(
        ACTION,
        lambda w: f"/api/v1/datasets/{A_DATASET}/rules/preview",
        "post",
        data=lambda w: {"rules": [WALK_RULE]},
        reached=(200, 400),  # 400 when A's dataset has no sync to preview on
    ),
    "api:dataset_rules_remove": Route(
        ACTION,
        lambda w: f"/api/v1/datasets/{A_DATASET}/rules/walk_rule",
        "delete",
        reached=(200, 400),  # 400 when the walk has not added it
    ),
    "api:rule_sets": Route(LIST, lambda w: "/api/v1/rule-sets", marker=lambda w: A_RULE_SET),
    "api:rule_set_save": Route(
        OWN,
        lambda w: f"/api/v1/rule-sets/{A_RULE_SET}",
        "post",
        data=lambda w: {"rules": [WALK_RULE], "reason": "walk"},
    ),
    "api:dataset_rule_set_use": Route(
        ACTION,
        lambda w: f"/api/v1/datasets/{A_DATASET}/rule-sets/{A_RULE_SET}",
        "post",
        reached=(201, 400),  # 400 when the walk's rule of the same id is A's own
    ),
    "api:dataset_rule_set_unuse": Route(
        ACTION,
        lambda w: f"/api/v1/datasets/{A_DATASET}/rule-sets/{A_RULE_SET}",
        "delete",
        reached=(200, 400),  # 400 when the walk has not used it
    ),
    "api:dataset_pipelines": Route(OBJECT, lambda w: f"/api/v1/datasets/{A_DATASET}/pipelines"),
    "api:dataset_pipelines_put": Route(
        ACTION,
        lambda w: f"/api/v1/datasets/{A_DATASET}/pipelines",
        "put",
        data=lambda w: pipelines_response(),
    ),
}


def url_names(patterns=None, namespace: str | None = None, prefix: str = "") -> set[str]:
    """Every URL pattern's name (namespaced), or its route when it has none."""
    names = set()
    for pattern in patterns if patterns is not None else get_resolver().url_patterns:
        if isinstance(pattern, URLResolver):
            inner = pattern.namespace or namespace
            names |= url_names(pattern.url_patterns, inner, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            name = pattern.name or prefix + str(pattern.pattern)
            names.add(f"{namespace}:{name}" if namespace and pattern.name else name)
    return names


def test_every_url_pattern_and_api_route_is_walked():
    # Admin's patterns are generated per model: test_admin walks every registered model.
    walked = {name for name in url_names() if not name.startswith(("admin:", "admin/"))}
    assert walked == set(ROUTES)
    # And every operation of the API's OpenAPI document has a route of that method.
    api_routes = [
        (route.url(FAKE), route.method) for name, route in ROUTES.items() if name.startswith("api:")
    ]
    for path, methods in api.get_openapi_schema()["paths"].items():
        pattern = re.compile("^" + re.sub(r"\\{[^/]+?\\}", "[^/]+", re.escape(path)) + "$")
        for method in methods:
            assert any(pattern.match(url) and m == method for url, m in api_routes), (path, method)


class _Fake:
    """Enough of a World to spell the routes' URLs."""

    class _Row:
        pk = 1
        batch_id = 1
        fingerprint = "f"

    run_a = finding_a = dismissed_a = token_a = _Row()


FAKE = _Fake()


def request(w: World, actor: str, route: Route):
    client = w.client(actor)
    url = route.url(w)
    data = route.data(w) if route.data else None
    if url.startswith("/api/"):
        headers = {} if actor == "anon" else {"Authorization": f"Bearer {w.secrets[actor]}"}
        if route.kind == UPLOAD:
            body = upload("seed-example.json").data
            return client.post(url, body, content_type="application/json", headers=headers)
        if data is not None:
            return getattr(client, route.method)(
                url, data, content_type="application/json", headers=headers
            )
        return getattr(client, route.method)(url, headers=headers)
    return getattr(client, route.method)(url, data or {})


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_b_never_reaches_as_data_and_a_does(world, name, settings):
    settings.RATE_LIMIT_PER_HOUR = 10_000
    route = ROUTES[name]
    is_api = route.url(world).startswith("/api/")
    codes = {}
    for actor in ("bob", "anon", "alice", "root"):  # outsiders first: A's data intact
        response = request(world, actor, route)
        codes[actor] = response.status_code
        body = b"".join(response.streaming_content) if response.streaming else response.content
        text = body.decode(errors="replace")
        assert response.status_code < 500, (actor, text[:500])
        if route.kind == PUBLIC:
            continue
        if actor == "anon":
            if is_api:
                assert response.status_code == 401
            else:
                assert response.status_code == 302 and "/accounts/login/" in response["Location"]
            continue
        outsider = actor == "bob" or (route.personal and actor == "root")
        if route.kind == LIST:
            assert response.status_code == 200
            shows = route.marker(world) in text
            assert shows == (not outsider), (actor, name)
        elif route.kind in (OBJECT, ACTION) and outsider:
            assert response.status_code == 404, (name, response.status_code, text[:300])
        elif route.kind in (OBJECT, ACTION) and actor == "alice":
            assert response.status_code in route.reached, (actor, name, text[:300])
        elif route.kind in (OBJECT, ACTION):  # root, after alice: may find it done already
            assert response.status_code not in (401, 403, 404), (actor, name, text[:300])
        elif route.kind == OWN:  # root after alice: the same rules again make no version
            assert response.status_code in (200, 201), (actor, name, text[:300])
            kept = RuleSet.objects.order_by("-pk").first()  # the version just saved
            assert kept.workspace == (world.b if actor == "bob" else world.a)
        elif route.kind == UPLOAD:
            assert response.status_code == 202, text[:300]
            batch = Batch.objects.get(pk=response.json()["batch_id"])
            assert batch.workspace == (world.b if actor == "bob" else world.a)
    # B's attempts left A's data as it was before A acted.
    assert Dismissal.objects.filter(dataset__workspace=world.b).count() == 0
    assert Batch.objects.filter(workspace=world.a, created_by=world.bob).count() == 0
    assert not RuleSet.objects.filter(workspace=world.a, created_by=world.bob).exists()
