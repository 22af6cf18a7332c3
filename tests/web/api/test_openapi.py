"""The OpenAPI document: valid, complete, and true to what the live server answers
(schemathesis generates requests from it, with a token, and checks every answer)."""

from __future__ import annotations

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from openapi_spec_validator import validate
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.uploads import DATA
from tests.web.api.conftest import bearer

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

ENDPOINTS = {
    ("POST", "/api/v1/batches"),
    ("GET", "/api/v1/runs"),
    ("GET", "/api/v1/runs/{run_id}"),
    ("POST", "/api/v1/runs/{run_id}/rerun"),
    ("GET", "/api/v1/runs/{run_id}/fix-plan"),
    ("GET", "/api/v1/datasets/{name}"),
    ("POST", "/api/v1/datasets/{name}/dismissals"),
    ("DELETE", "/api/v1/datasets/{name}/dismissals/{fingerprint}"),
    ("POST", "/api/v1/datasets/{name}/pull"),
    ("GET", "/api/v1/datasets/{name}/tuning"),
    ("POST", "/api/v1/datasets/{name}/policy/apply"),
    ("POST", "/api/v1/datasets/{name}/policy/restore"),
    ("GET", "/api/v1/datasets/{name}/pipelines"),
    ("PUT", "/api/v1/datasets/{name}/pipelines"),
}
# Examples per operation: with 9 operations, a few hundred requests in all.
EXAMPLES = 50
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


def openapi_document(base_url: str) -> dict:
    response = httpx.get(f"{base_url}/api/v1/openapi.json")
    assert response.status_code == 200
    return response.json()


def test_the_openapi_document_validates_and_lists_every_endpoint(live_server):
    document = openapi_document(live_server.url)
    validate(document)  # raises on an invalid OpenAPI document
    listed = {(m.upper(), path) for path, item in document["paths"].items() for m in item}
    assert listed == ENDPOINTS
    assert document["components"]["securitySchemes"]["TokenAuth"]["scheme"] == "bearer"
    for path, item in document["paths"].items():
        for method, operation in item.items():
            assert "401" in operation["responses"], (method, path)


def test_the_interactive_docs_are_served(live_server):
    response = httpx.get(f"{live_server.url}/api/v1/docs")
    assert response.status_code == 200
    assert "openapi.json" in response.text


@pytest.fixture
def seeded(http):
    """Something to find: a dataset with a reviewed sync, so generated requests can
    meet real rows as well as missing ones."""
    content = (DATA / "seed-example.json").read_bytes()
    response = http.post(
        "/batches",
        content=content,
        headers={"Content-Type": "application/json"},
        params={"dataset": "a"},
    )
    assert response.status_code == 202


# schemathesis's own pytest plugin does not run on pytest 9, so the generated cases
# are driven by Hypothesis directly: one test per operation, valid and invalid data.
@pytest.mark.parametrize(("method", "path"), sorted(ENDPOINTS))
def test_generated_requests_get_no_500_and_answers_that_fit_the_schema(
    live_server, token, seeded, method, path
):
    schema = schemathesis.openapi.from_dict(openapi_document(live_server.url))
    operation = schema[path][method]
    sent = []
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=EXAMPLES // 2,
            deadline=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        def call(case) -> None:
            response = case.call_and_validate(
                base_url=live_server.url, headers=bearer(token), checks=CHECKS, timeout=60
            )
            sent.append(response.status_code)

        call()
    print(f"{method} {path}: {len(sent)} generated requests, statuses {sorted(set(sent))}")
    assert len(sent) >= EXAMPLES // 2, sent  # it did send requests
