"""schemathesis against the live server: for every operation of the OpenAPI document,
requests it generates (valid ones and ones the document calls invalid, through its
coverage and fuzzing phases) are sent with a token, and every answer goes through all
its checks: no server error; a status, content type, headers and body the document
lists; a request the document calls valid is not refused (`positive_data_acceptance`:
`POST /batches {}` was a 400, `GET /runs/{id}/fix-plan?format=csv` a 422) and one it
calls invalid is (`negative_data_rejection`: `GET /runs?since=0.5` was a 200).

One server and one seed serve every operation (a dataset with a reviewed sync and a
dismissal, committed, and flushed when the module ends), not pytest-django's
live_server per operation: its flush after each of the 14 would take most of the time.
The document tested is the one the server serves (test_openapi.py checks)."""

from __future__ import annotations

import collections
import hashlib
from datetime import timedelta

import httpx
import pytest
import schemathesis
from django.core.management import call_command
from django.test.utils import modify_settings
from hypothesis import HealthCheck, settings
from pytest_django.live_server_helper import LiveServer
from schemathesis.config import SchemathesisConfig

from reviews.apiauth.tokens import create_token
from reviews.web.api.api import api
from revreview.celery import app
from tests.uploads import DATA
from tests.web.api.conftest import bearer

# django_db: the test database is made for this module's tests too (their requests are
# answered by the server's own connection, committed; on SQLite in memory, the shared
# one, rolled back after each test).
pytestmark = [pytest.mark.integration, pytest.mark.django_db]

DATASET = "acme-hubspot"
SEED = (DATA / "seed-example.json").read_bytes()

# These answer 400 for a well-formed request naming what the dataset does not have (a
# finding, a standing dismissal, a proposal, a policy version, a HubSpot connection):
# the document lists that 400; no schema can say which names exist.
STATEFUL_400 = [
    "POST /api/v1/datasets/{name}/dismissals",
    "DELETE /api/v1/datasets/{name}/dismissals/{fingerprint}",
    "POST /api/v1/datasets/{name}/pull",
    "POST /api/v1/datasets/{name}/policy/apply",
    "POST /api/v1/datasets/{name}/policy/restore",
]
# These answer 400 for a well-formed rule file the server refuses with every problem (a
# `when` outside the allow-list or not SQL, an id that is a built-in kind, a rule the
# dataset does not have; a rule set's name that is not a slug, or one the workspace
# lacks): the document lists that 400; no schema can say which SQL is allowed
# (docs/rules.md#the-when-language).
RULE_FILE_400 = [
    "POST /api/v1/datasets/{name}/rules",
    "POST /api/v1/datasets/{name}/rules/preview",
    "DELETE /api/v1/datasets/{name}/rules/{rule_id}",
    "POST /api/v1/rule-sets/{set_name}",
    "POST /api/v1/datasets/{name}/rule-sets/{set_name}",
    "DELETE /api/v1/datasets/{name}/rule-sets/{set_name}",
]
CONFIG = SchemathesisConfig.from_dict(
    {
        "operations": [
            {
                "include-name": STATEFUL_400 + RULE_FILE_400,
                "checks": {
                    "positive_data_acceptance": {
                        "expected-statuses": ["2xx", "400", "401", "403", "404", "409", "429"]
                    }
                },
            }
        ]
    }
)
SCHEMA = schemathesis.openapi.from_dict(api.get_openapi_schema(), config=CONFIG)


@pytest.fixture(scope="module")
def served(django_db_setup, django_db_blocker):
    """A live server, a token, and the seed: {url, token, run_id, name, fingerprint}."""
    from django.contrib.auth import get_user_model

    from workspaces.models import Membership, Role, default_workspace

    with django_db_blocker.unblock():
        server = LiveServer("localhost")
        allowed = modify_settings(ALLOWED_HOSTS={"append": "localhost"})
        allowed.enable()
        try:
            user = get_user_model().objects.create_user("fuzzer", password="fuzzer-pass-123")
            Membership.objects.create(workspace=default_workspace(), user=user, role=Role.REVIEWER)
            token = create_token(user, "schemathesis").secret
            seeded = seed(server.url, token)
            # Then, as deployed, a review is a worker's: the tasks go to the test broker
            # and wait there. The API's answers are tested, not the reviews' time (a
            # review per valid upload made this test minutes long).
            app.conf.task_always_eager = False
            yield {"url": server.url, "token": token, **seeded}
        finally:
            app.conf.task_always_eager = True
            app.control.purge()
            allowed.disable()
            server.stop()
            call_command("flush", interactive=False, verbosity=0)


def seed(url: str, token: str) -> dict[str, object]:
    """A dataset with a reviewed sync and one of its findings dismissed: the names a
    valid request's path is given, so every operation meets real rows, not only 404."""
    with httpx.Client(base_url=f"{url}/api/v1", headers=bearer(token), timeout=60) as http:
        response = http.post(
            "/batches", content=SEED, headers={"Content-Type": "application/json"},
            params={"dataset": DATASET},
        )  # fmt: skip
        assert response.status_code == 202, response.text
        run_id = response.json()["run_id"]
        fingerprint = http.get(f"/runs/{run_id}").json()["findings"][0]["fingerprint"]
        dismissed = http.post(
            f"/datasets/{DATASET}/dismissals", json={"fingerprint": fingerprint, "reason": "known"}
        )
        assert dismissed.status_code == 201, dismissed.text
    return {"run_id": run_id, "name": DATASET, "fingerprint": fingerprint}


@pytest.fixture
def answers():
    """The statuses one operation's requests got: some must be other than 404 (the
    seeded rows were met) and 401 (the token was taken)."""
    statuses: collections.Counter[int | str] = collections.Counter()
    yield statuses
    if not statuses["failed"]:  # a failed test says why itself
        assert set(+statuses) - {401, 404}, f"only {dict(statuses)}"


def with_seeded_names(case, seeded: dict[str, object]) -> None:
    """Point a valid request's path at the seeded dataset, run and dismissal, so what
    it asks is answered from real rows (an invalid one keeps its generated path: 404 or
    422; an unknown name is 404 in test_runs.py and tests/workspaces/test_walk.py)."""
    named = {key: seeded[key] for key in case.path_parameters if key in seeded}
    if named:
        case.path_parameters = {**case.path_parameters, **named}


def with_a_batch_file(case) -> None:
    """A valid multipart upload's files hold a batch: the document can say a part is a
    file, not what is in it (what is not a batch is answered 400 with its errors)."""
    if case.media_type == "multipart/form-data" and isinstance(case.body, dict):
        case.body = {**case.body, "files": [SEED.decode()]}  # text, as generated


def with_unique_ids(value: object) -> object:
    """The body with every list's repeated ids made unique (records, pipelines, their
    stages): the document says ids are unique within a list, JSON Schema cannot."""
    if isinstance(value, dict):
        return {key: with_unique_ids(item) for key, item in value.items()}
    if not isinstance(value, list):
        return value
    seen: set[str] = set()
    unique = []
    for index, item in enumerate(value):
        item = with_unique_ids(item)
        if isinstance(item, dict) and "id" in item:
            key = str(item["id"]).strip()
            if key in seen:
                item = {**item, "id": f"{key}~{index}"}
            seen.add(str(item["id"]).strip())
        unique.append(item)
    return unique


def with_a_key_per_upload(case) -> None:
    """An Idempotency-Key names one upload, as a client makes it: the generated key
    with a hash of the request, so another upload does not reuse it (that is a 422, as
    documented) and a replayed case gets its first answer again."""
    key = case.headers.get("Idempotency-Key")
    if key:
        digest = hashlib.sha256(repr((case.query, case.body)).encode()).hexdigest()[:16]
        case.headers["Idempotency-Key"] = f"{key[:200]}-{digest}"


@SCHEMA.parametrize()
@settings(
    max_examples=5,
    deadline=timedelta(seconds=20),
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_answers_as_its_document_says(case, served, answers):
    # Only a valid request is changed: an invalid one stays as invalid as it was made.
    if case.meta.generation.mode.is_positive:
        with_seeded_names(case, served)
        with_a_batch_file(case)
        if case.media_type == "application/json":
            case.body = with_unique_ids(case.body)
        with_a_key_per_upload(case)
    answers["failed"] += 1  # until the answer passes every check
    response = case.call_and_validate(
        base_url=served["url"], headers=bearer(served["token"]), timeout=30
    )
    answers["failed"] -= 1
    answers[response.status_code] += 1
