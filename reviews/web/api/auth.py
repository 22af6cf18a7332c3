"""Bearer-token authentication for the API, one instance per scope an endpoint needs.

A missing, unknown or revoked token is 401; a good token without the scope is 403.
The token authenticates as its user for the API only: request.user stays anonymous
(no session is made), so admin and the dashboard never see a token as a login."""

from __future__ import annotations

from django.http import HttpRequest
from ninja.errors import AuthorizationError
from ninja.security import HttpBearer

from reviews.web.api.models import ApiToken
from reviews.web.api.tokens import active_token


class TokenAuth(HttpBearer):
    def __init__(self, scope: str) -> None:
        super().__init__()
        self.scope = str(scope)

    def __call__(self, request: HttpRequest) -> ApiToken | None:
        # Not HttpBearer's: under DEBUG it logs a header with another scheme, which may
        # hold a token all the same. Tokens never reach a log.
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            return None
        return self.authenticate(request, token)

    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        found = active_token(token.strip())
        if found is None:
            return None
        if not found.has_scope(self.scope):
            raise AuthorizationError(message=f"this token lacks the '{self.scope}' scope")
        return found


READ = TokenAuth(ApiToken.Scope.READ)
UPLOAD = TokenAuth(ApiToken.Scope.UPLOAD)


def rate_identity(token: ApiToken) -> str:
    """The rate limit counts an API client as its user, wherever it connects from."""
    return f"user:{token.user_id}"
