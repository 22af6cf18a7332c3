"""The OpenAPI document: valid, listing every endpoint, and the very document
test_openapi_schemathesis.py holds the live server to."""

from __future__ import annotations

import json

import httpx
import pytest
from ninja.responses import NinjaJSONEncoder
from openapi_spec_validator import validate

from reviews.web.api.api import api

pytestmark = [pytest.mark.django_db]

ENDPOINTS = {
    ("POST", "/api/v1/batches"),
    ("GET", "/api/v1/runs"),
    ("GET", "/api/v1/runs/{run_id}"),
    ("POST", "/api/v1/runs/{run_id}/rerun"),
    ("GET", "/api/v1/runs/{run_id}/fix-plan"),
    ("GET", "/api/v1/runs/{run_id}/merges/undo"),
    ("POST", "/api/v1/runs/{run_id}/merges/undo"),
    ("GET", "/api/v1/datasets/{name}"),
    ("POST", "/api/v1/datasets/{name}/dismissals"),
    ("DELETE", "/api/v1/datasets/{name}/dismissals/{fingerprint}"),
    ("POST", "/api/v1/datasets/{name}/pull"),
    ("GET", "/api/v1/datasets/{name}/tuning"),
    ("POST", "/api/v1/datasets/{name}/policy/apply"),
    ("POST", "/api/v1/datasets/{name}/policy/restore"),
    ("GET", "/api/v1/datasets/{name}/rules"),
    ("POST", "/api/v1/datasets/{name}/rules"),
    ("POST", "/api/v1/datasets/{name}/rules/preview"),
    ("DELETE", "/api/v1/datasets/{name}/rules/{rule_id}"),
    ("GET", "/api/v1/rule-sets"),
    ("POST", "/api/v1/rule-sets/{set_name}"),
    ("POST", "/api/v1/datasets/{name}/rule-sets/{set_name}"),
    ("DELETE", "/api/v1/datasets/{name}/rule-sets/{set_name}"),
    ("GET", "/api/v1/datasets/{name}/pipelines"),
    ("PUT", "/api/v1/datasets/{name}/pipelines"),
}


def test_the_served_document_validates_and_lists_every_endpoint(live_server):
    response = httpx.get(f"{live_server.url}/api/v1/openapi.json")
    assert response.status_code == 200
    document = response.json()
    validate(document)  # raises on an invalid OpenAPI document
    listed = {(m.upper(), path) for path, item in document["paths"].items() for m in item}
    assert listed == ENDPOINTS
    assert document["components"]["securitySchemes"]["TokenAuth"]["scheme"] == "bearer"
    for path, item in document["paths"].items():
        for method, operation in item.items():
            assert "401" in operation["responses"], (method, path)
    # What test_openapi_schemathesis.py loads in-process is what is served.
    assert document == json.loads(json.dumps(api.get_openapi_schema(), cls=NinjaJSONEncoder))


def test_the_interactive_docs_are_served(client):
    response = client.get("/api/v1/docs")
    assert response.status_code == 200
    assert "openapi.json" in response.content.decode()
