"""The API object: /api/v1/ with its OpenAPI schema (/api/v1/openapi.json) and
interactive docs (/api/v1/docs)."""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError

from reviews.orchestration.intake.submit import unreachable_errors
from reviews.web.api import (
    batches,
    datasets,
    fixplan,
    pulls,
    rule_sets,
    runs,
    team_rules,
    tuning,
    undo,
)
from reviews.web.unavailable import UNAVAILABLE, retry_after

logger = logging.getLogger(__name__)

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
# Before datasets: its GET route's name may hold "/" and would match these paths.
api.add_router("/", pulls.router)
api.add_router("/", tuning.router)
api.add_router("/", team_rules.router)
api.add_router("/", rule_sets.router)
api.add_router("/", datasets.router)
api.add_router("/", fixplan.router)
api.add_router("/", undo.router)


@api.exception_handler(AuthenticationError)
def unauthorized(request: HttpRequest, error: AuthenticationError) -> HttpResponse:
    response = api.create_response(
        request, {"detail": "a valid API token is required (Authorization: Bearer ...)"}, status=401
    )
    response["WWW-Authenticate"] = 'Bearer realm="revreview"'
    return response


def database_unavailable(request: HttpRequest, error: Exception) -> HttpResponse:
    """Any endpoint while the database cannot be reached (an upload is kept instead,
    reviews.web.api.batches): 503 with Retry-After, never a traceback."""
    logger.warning("database unavailable for %s %s: %s", request.method, request.path, error)
    response = api.create_response(request, {"detail": UNAVAILABLE}, status=503)
    response["Retry-After"] = str(retry_after())
    return response


for _error in unreachable_errors():
    api.add_exception_handler(_error, database_unavailable)
