"""While the database cannot be reached: every page answers 503 "database unavailable"
(the API answers in JSON, reviews.web.api.api), rendered without reading anything from
it, instead of a 500. Uploads are the exception: they are kept in the spool
(reviews.web.uploads, reviews.web.offline_auth)."""

from __future__ import annotations

import logging

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

from reviews.orchestration.intake.submit import unreachable_errors

logger = logging.getLogger(__name__)

UNAVAILABLE = "the database is unavailable; try again later"


def retry_after() -> int:
    """When to look again: the sweep imports the spool every SWEEP_INTERVAL_SECONDS once
    the database is back."""
    return 2 * int(settings.SWEEP_INTERVAL_SECONDS)


def unavailable_page(template: str = "503.html", **context) -> HttpResponse:
    """A 503 page with Retry-After. Rendered without the request, so no context processor
    runs: nothing asks for the user, the session's messages or the database."""
    context = {"retry_after": retry_after(), **context}
    response = HttpResponse(render_to_string(template, context), status=503)
    response["Retry-After"] = str(retry_after())
    return response


class DatabaseUnavailableMiddleware:
    """A view (or its template) that fails because the database cannot be reached gets
    the 503 page. One warning is logged, not a traceback per request of an outage."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, unreachable_errors()):
            return None
        logger.warning(
            "database unavailable for %s %s: %s", request.method, request.path, exception
        )
        return unavailable_page()
