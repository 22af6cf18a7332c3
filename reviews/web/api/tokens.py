"""Create, check and revoke API tokens. A token is `rr_` + 43 random URL-safe
characters (256 bits), so a plain sha256 is a safe way to store it: there is nothing to
guess, and a lookup by digest is one indexed query."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth.base_user import AbstractBaseUser
from django.utils import timezone

from reviews.web.api.models import ApiToken

TOKEN_PREFIX = "rr_"  # noqa: S105 (a marker, not a secret)
SHOWN_PREFIX_LENGTH = 8
# last_used_at is written at most this often per token, not on every request.
LAST_USED_RESOLUTION = timedelta(minutes=1)
ALL_SCOPES = tuple(ApiToken.Scope.values)


@dataclass(frozen=True, slots=True)
class NewToken:
    token: ApiToken
    secret: str  # the token itself: shown once, never stored


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def create_token(
    user: AbstractBaseUser, name: str, scopes: list[str] | tuple[str, ...] = ALL_SCOPES
) -> NewToken:
    """A new token for `user`. Raises ValueError for an unknown scope, an empty name or
    a name an active token of the user already has."""
    name = name.strip()
    if not name:
        raise ValueError("a token needs a name")
    unknown = sorted(set(scopes) - set(ALL_SCOPES))
    if unknown or not scopes:
        raise ValueError(f"scopes must be among {', '.join(ALL_SCOPES)}; got {list(scopes)}")
    if ApiToken.objects.filter(user=user, name=name, revoked_at__isnull=True).exists():
        raise ValueError(f"{user.get_username()} already has an active token named {name!r}")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user,
        name=name,
        prefix=secret[:SHOWN_PREFIX_LENGTH],
        digest=digest(secret),
        scopes=sorted(set(scopes)),
    )
    return NewToken(token=token, secret=secret)


def revoke_token(user: AbstractBaseUser, name: str) -> bool:
    """Revoke the user's active token of that name; False if there is none."""
    return bool(
        ApiToken.objects.filter(user=user, name=name, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
    )


def active_token(secret: str) -> ApiToken | None:
    """The active token this secret is, of an active user, or None. Marks it used."""
    if not secret.startswith(TOKEN_PREFIX) or len(secret) > 200:
        return None
    token = (
        ApiToken.objects.select_related("user")
        .filter(digest=digest(secret), revoked_at__isnull=True, user__is_active=True)
        .first()
    )
    if token is None:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token
