"""Create, check and revoke API tokens. A token is `rr_` + 43 random URL-safe
characters (256 bits), so a plain sha256 is a safe way to store it: there is nothing to
guess, and a lookup by digest is one indexed query.

Each active token's digest, id, user and scopes are also kept in the cache (Redis),
so that an upload sent while the database is down can be kept in the spool for its
token's user (cached_token); the import checks the token again in the database
(check_spooled_sender), which is the authority."""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.cache import cache
from django.db.models import QuerySet
from django.utils import timezone

from reviews.apiauth.models import ApiToken
from reviews.orchestration.store.spool import SenderRefused
from workspaces.access import only_workspace, role_in
from workspaces.models import ROLE_RANK, Role, Workspace

logger = logging.getLogger(__name__)

TOKEN_PREFIX = "rr_"  # noqa: S105 (a marker, not a secret)
SHOWN_PREFIX_LENGTH = 8
# last_used_at is written at most this often per token, not on every request.
LAST_USED_RESOLUTION = timedelta(minutes=1)
ALL_SCOPES = tuple(ApiToken.Scope.values)
# A token is cached when made and again whenever its last use is written; one unused
# this long is forgotten, and while the database is down its uploads are not kept.
CACHE_SECONDS = 30 * 24 * 3600


@dataclass(frozen=True, slots=True)
class NewToken:
    token: ApiToken
    secret: str  # the token itself: shown once, never stored


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


# The least role a scope needs: reading needs a member, uploading a reviewer.
SCOPE_ROLES = {ApiToken.Scope.READ: Role.VIEWER, ApiToken.Scope.UPLOAD: Role.REVIEWER}


def token_workspace(user: AbstractBaseUser, workspace: Workspace | None) -> Workspace:
    """The workspace a new token acts for: the one named, or the user's only one.
    Raises ValueError when none is named and the user has several (or none)."""
    if workspace is not None:
        return workspace
    only = only_workspace(user)
    if only is None:
        raise ValueError(
            f"{user.get_username()} is a member of several workspaces or of none: "
            "name the workspace the token acts for"
        )
    return only


def scope_problem(role: str | None, scopes) -> str | None:
    """Why a member with `role` may not hold a token with these scopes, or None."""
    if role is None:
        return "the user is not a member of the workspace"
    for scope in scopes:
        needed = SCOPE_ROLES[scope]
        if ROLE_RANK[role] < ROLE_RANK[needed]:
            return f"the '{scope}' scope needs the {needed} role; the user is a {role}"
    return None


def create_token(
    user: AbstractBaseUser,
    name: str,
    scopes: list[str] | tuple[str, ...] = ALL_SCOPES,
    *,
    workspace: Workspace | None = None,
) -> NewToken:
    """A new token for `user`, acting for one workspace (`workspace`, or the user's only
    one). Raises ValueError for an unknown scope, an empty name, a name an active token
    of the user already has, or a workspace or scope the user's role does not allow."""
    name = name.strip()
    if not name:
        raise ValueError("a token needs a name")
    unknown = sorted(set(scopes) - set(ALL_SCOPES))
    if unknown or not scopes:
        raise ValueError(f"scopes must be among {', '.join(ALL_SCOPES)}; got {list(scopes)}")
    if ApiToken.objects.filter(user=user, name=name, revoked_at__isnull=True).exists():
        raise ValueError(f"{user.get_username()} already has an active token named {name!r}")
    workspace = token_workspace(user, workspace)
    problem = scope_problem(role_in(user, workspace.pk), scopes)
    if problem:
        raise ValueError(f"no token in workspace {workspace}: {problem}")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user,
        workspace=workspace,
        name=name,
        prefix=secret[:SHOWN_PREFIX_LENGTH],
        digest=digest(secret),
        scopes=sorted(set(scopes)),
    )
    remember(token)
    return NewToken(token=token, secret=secret)


def revoke_token(user: AbstractBaseUser, name: str) -> bool:
    """Revoke the user's active token of that name; False if there is none."""
    return bool(revoke(ApiToken.objects.filter(user=user, name=name)))


def revoke(tokens: QuerySet[ApiToken]) -> int:
    """Revoke the active tokens among `tokens` and forget them in the cache; how many."""
    active = dict(tokens.filter(revoked_at__isnull=True).values_list("pk", "digest"))
    count = ApiToken.objects.filter(pk__in=active, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )
    forget(active.values())
    return count


def active_token(secret: str) -> ApiToken | None:
    """The active token this secret is, of an active user, or None. Marks it used."""
    if not secret.startswith(TOKEN_PREFIX) or len(secret) > 200:
        return None
    token = (
        ApiToken.objects.select_related("user", "workspace")
        .filter(digest=digest(secret), revoked_at__isnull=True, user__is_active=True)
        .first()
    )
    if token is None:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
        remember(token)  # again: the cache may have lost it (a Redis restart)
    return token


@dataclass(frozen=True, slots=True)
class CachedToken:
    """An active token as the cache last saw it: not checked against the database."""

    user_id: Any
    scopes: list[str]
    digest: str
    workspace_id: Any = None
    error: str = ""  # why the database was not asked

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes


def _cache_key(token_digest: str) -> str:
    return f"api-token:{token_digest}"


def remember(token: ApiToken) -> None:
    # The cache is an aid for outages: a cache that fails never fails the request.
    value = {
        "user_id": token.user_id,
        "scopes": list(token.scopes),
        "workspace_id": token.workspace_id,
    }
    try:
        cache.set(_cache_key(token.digest), value, CACHE_SECONDS)
    except Exception:
        logger.warning("could not cache API token %s", token, exc_info=True)


def forget(digests: Iterable[str]) -> None:
    # One left behind is refused at import all the same (check_spooled_sender).
    try:
        cache.delete_many([_cache_key(d) for d in digests])
    except Exception:
        logger.warning("could not forget revoked API tokens in the cache", exc_info=True)


def cached_token(secret: str) -> CachedToken | None:
    """The token this secret is, as cached when it was last used or made; None if the
    cache does not know it (never used in CACHE_SECONDS, revoked, or no token at all)."""
    if not secret.startswith(TOKEN_PREFIX) or len(secret) > 200:
        return None
    token_digest = digest(secret)
    try:
        value = cache.get(_cache_key(token_digest))
    except Exception:
        logger.warning("could not read the API token cache", exc_info=True)
        return None
    if value is None:
        return None
    return CachedToken(
        user_id=value["user_id"],
        scopes=value["scopes"],
        digest=token_digest,
        workspace_id=value.get("workspace_id"),
    )


def check_spooled_sender(user_id: Any, sender: dict[str, str]) -> AbstractBaseUser:
    """At the import of an upload kept while the database was down: its token's user, if
    the token is still active, with the upload scope, of an active user. Else
    SenderRefused with the reason (reviews.orchestration.intake.spool_senders)."""
    stale = "the API token that sent this upload was no longer valid when it was imported"
    token = (
        ApiToken.objects.select_related("user", "workspace")
        .filter(digest=sender.get("token_sha256") or "")
        .first()
    )
    if token is None:
        raise SenderRefused(f"{stale}: there is no such token")
    if token.revoked_at is not None:
        raise SenderRefused(f"{stale}: token {token} was revoked")
    if not token.user.is_active:
        raise SenderRefused(f"{stale}: its user {token.user.get_username()} is inactive")
    if not token.has_scope(ApiToken.Scope.UPLOAD):
        raise SenderRefused(f"{stale}: token {token} lacks the 'upload' scope")
    problem = scope_problem(role_in(token.user, token.workspace_id), [ApiToken.Scope.UPLOAD])
    if problem:
        raise SenderRefused(f"{stale}: in workspace {token.workspace}, {problem}")
    return token.user
