"""Who sent a spooled upload, checked when it is imported.

While the database is down the web cannot look a sender up: it keeps the user id it
was told and how it was told (`meta["sender"]`, reviews.orchestration.store.spool): a
signed-in session's auth hash, or the sha256 of an API token, never the session key or
the token itself. Once the database is back the import checks it here, as a request
would have been checked; an upload whose sender no longer holds is stored rejected with
the reason, never dropped."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.utils.crypto import constant_time_compare

from reviews.apiauth.tokens import check_spooled_sender
from reviews.orchestration.intake.submit import DatabaseUnavailable, unreachable_errors
from reviews.orchestration.store.spool import SenderRefused

SESSION = "session"  # {"via": "session", "session_auth_hash": ...}
TOKEN = "token"  # noqa: S105 (a kind of sender) {"via": "token", "token_sha256": ...}

Check = Callable[[Any, dict[str, str]], AbstractBaseUser]


def check_session(user_id: Any, sender: dict[str, str]) -> AbstractBaseUser:
    """The session's user, if the session would still let it in: the user exists, is
    active, and its auth hash is the one the session signed in with (the password has
    not changed since), as django.contrib.auth checks a session at every request."""
    stale = "the session that sent this upload was no longer valid when it was imported"
    user = get_user_model()._default_manager.filter(pk=user_id).first()
    if user is None:
        raise SenderRefused(f"{stale}: user {user_id} no longer exists")
    if not user.is_active:
        raise SenderRefused(f"{stale}: user {user.get_username()} is inactive")
    signed_in_with = sender.get("session_auth_hash") or ""
    hashes = [user.get_session_auth_hash(), *user.get_session_auth_fallback_hash()]
    if not any(constant_time_compare(signed_in_with, h) for h in hashes):
        raise SenderRefused(
            f"{stale}: the password of {user.get_username()} was changed after it signed in"
        )
    return user


# By `via`: a signed-in session, or an API token (checked by the API's token app).
_CHECKS: dict[str, Check] = {SESSION: check_session, TOKEN: check_spooled_sender}


def sender_of(meta: dict[str, Any]) -> AbstractBaseUser | None:
    """The user a spooled upload is stored for (None: one checked at reception whose user
    was deleted since). Raises SenderRefused, or DatabaseUnavailable while the database
    still cannot be reached."""
    user_id, sender = meta.get("user_id"), meta.get("sender")
    try:
        if sender is None:  # checked against the database when it was received
            return get_user_model()._default_manager.filter(pk=user_id).first()
        check = _CHECKS.get(sender.get("via", ""))
        if check is None:
            raise SenderRefused(f"the upload's sender ({sender.get('via')!r}) cannot be checked")
        return check(user_id, sender)
    except unreachable_errors() as error:
        raise DatabaseUnavailable.of(error) from error
