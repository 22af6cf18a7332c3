"""The API object: /api/v1/ with its OpenAPI schema (/api/v1/openapi.json) and
interactive docs (/api/v1/docs)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError

from reviews.web.api import batches, datasets, runs

api = NinjaAPI(
    title="revreview API",
    version="1",
    description=(
        "Upload CRM batches for review and read the verdicts. Authenticate with "
        "`Authorization: Bearer <token>`; create a token under Settings → API tokens "
        "or with `manage.py api_token`."
    ),
    urls_namespace="api",
)
api.add_router("/", batches.router)
api.add_router("/", runs.router)
api.add_router("/", datasets.router)


@api.exception_handler(AuthenticationError)
def unauthorized(request: HttpRequest, error: AuthenticationError) -> HttpResponse:
    response = api.create_response(
        request, {"detail": "a valid API token is required (Authorization: Bearer ...)"}, status=401
    )
    response["WWW-Authenticate"] = 'Bearer realm="revreview"'
    return response
