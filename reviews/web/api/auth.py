"""Bearer-token authentication for the API, one instance per scope an endpoint needs.

A missing, unknown or revoked token is 401; a good token without the scope is 403.
The token authenticates as its user for the API only: request.user stays anonymous
(no session is made), so admin and the dashboard never see a token as a login.

While the database is down a token cannot be checked and the request answers 503
(reviews.web.api.api), except an upload (UPLOAD_OR_SPOOL): a token the cache knows
passes as a CachedToken and the upload is kept in the spool, its token checked again
at import. One the cache does not know gets the 503 and nothing is kept, so a made-up
token cannot fill the spool."""

from __future__ import annotations

from dataclasses import replace

from django.http import HttpRequest
from ninja.errors import AuthorizationError
from ninja.security import HttpBearer

from reviews.apiauth.models import ApiToken
from reviews.apiauth.tokens import CachedToken, active_token, cached_token, scope_problem
from reviews.orchestration.intake.submit import DatabaseUnavailable, unreachable_errors
from reviews.web.client_address import request_rate_keys
from workspaces.access import role_in


class TokenAuth(HttpBearer):
    def __init__(self, scope: str, *, offline: bool = False) -> None:
        super().__init__()
        self.scope = str(scope)
        self.offline = offline  # a cached token passes while the database is down

    def __call__(self, request: HttpRequest) -> ApiToken | CachedToken | None:
        # Not HttpBearer's: under DEBUG it logs a header with another scheme, which may
        # hold a token all the same. Tokens never reach a log.
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            return None
        return self.authenticate(request, token)

    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | CachedToken | None:
        secret = token.strip()
        try:
            found = active_token(secret)
        except unreachable_errors() as error:
            found = cached_token(secret) if self.offline else None
            if found is None:
                raise
            found = replace(found, error=str(DatabaseUnavailable.of(error)))
        if found is None:
            return None
        if not found.has_scope(self.scope):
            raise AuthorizationError(message=f"this token lacks the '{self.scope}' scope")
        if isinstance(found, ApiToken):
            # Its user's role now, not when it was made: a member removed or demoted
            # loses what the token could do.
            problem = scope_problem(role_in(found.user, found.workspace_id), [self.scope])
            if problem:
                raise AuthorizationError(message=f"workspace {found.workspace}: {problem}")
        return found


READ = TokenAuth(ApiToken.Scope.READ)
UPLOAD = TokenAuth(ApiToken.Scope.UPLOAD)
UPLOAD_OR_SPOOL = TokenAuth(ApiToken.Scope.UPLOAD, offline=True)  # POST /batches only


def rate_identity(token: ApiToken | CachedToken, request: HttpRequest) -> list[str]:
    """The rate limit counts an API request as the dashboard counts its own: against
    the token's user (ledger.ratelimit.rate_keys), and its workspace where it is served;
    never the client's address, which a whole office may share."""
    return request_rate_keys(request, user_id=token.user_id)
