"""Who sent a dashboard upload while the database is down.

Loading a signed-in user reads the database (AuthenticationMiddleware), so with the
database down `request.user` fails. The session itself is in Redis (SESSION_ENGINE
`cached_db`, revreview/settings.py) and holds the user's id and auth hash (an HMAC of
the user's password hash): enough to keep the upload in the spool for that user, to be
checked once the database is back (reviews.orchestration.intake.spool_senders). Only the
upload endpoint takes this path; other pages answer 503 (reviews.web.unavailable). A
request without a signed-in session is sent to log in as always, so an anonymous
client cannot fill the spool."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse

from reviews.orchestration.intake.spool_senders import SESSION
from reviews.orchestration.intake.submit import DatabaseUnavailable, unreachable_errors

_ATTRIBUTE = "offline_sender"


@dataclass(frozen=True, slots=True)
class OfflineSender:
    """A signed-in session's user, not looked up: the database could not be reached."""

    user_id: Any
    sender: dict[str, str]  # the spool's `sender`: how to check the user at import
    error: str  # why the database could not say


def login_required_or_offline(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """login_required, except that a POST from a signed-in session passes while the
    database cannot be reached, with offline_sender(request) set; a GET, or a session
    that holds no user, raises the database's error (the 503 page)."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        try:
            signed_in = request.user.is_authenticated
        except unreachable_errors() as error:
            sender = session_sender(request, error) if request.method == "POST" else None
            if sender is None:
                raise
            setattr(request, _ATTRIBUTE, sender)
            return view(request, *args, **kwargs)
        if not signed_in:
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return wrapped


def offline_sender(request: HttpRequest) -> OfflineSender | None:
    """The session's unconfirmed user when the database could not load it, else None."""
    return getattr(request, _ATTRIBUTE, None)


def session_sender(request: HttpRequest, error: Exception) -> OfflineSender | None:
    """The user the session signed in, as Django would find it before asking the
    database; None for a session without one (or with a backend no longer configured,
    which Django would refuse too). Never the session key."""
    session = request.session
    try:
        user_id = get_user_model()._meta.pk.to_python(session[SESSION_KEY])
        backend, auth_hash = session[BACKEND_SESSION_KEY], session[HASH_SESSION_KEY]
    except (KeyError, ValidationError):
        return None
    if backend not in settings.AUTHENTICATION_BACKENDS or not auth_hash:
        return None
    return OfflineSender(
        user_id=user_id,
        sender={"via": SESSION, "session_auth_hash": auth_hash},
        error=str(DatabaseUnavailable.of(error)),
    )
