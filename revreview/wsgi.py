import logging
import os

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "revreview.settings")
application = get_wsgi_application()


# Django's own bar for a key worth its name (the security.W009 check): at least this
# long, with at least this many different characters.
SECRET_KEY_MIN_LENGTH = 50
SECRET_KEY_MIN_UNIQUE_CHARACTERS = 5


def require_secret_key() -> None:
    """A web server (gunicorn, runserver) with DEBUG off refuses to start on a known or
    weak SECRET_KEY: anyone could forge its sessions and CSRF tokens."""
    if settings.DEBUG:
        return
    key = settings.SECRET_KEY
    if key in settings.DEFAULT_SECRET_KEYS:
        raise ImproperlyConfigured(
            "SECRET_KEY is the built-in default; set SECRET_KEY to a long random value "
            "(or DEBUG=true for local development)"
        )
    if len(key) < SECRET_KEY_MIN_LENGTH or len(set(key)) < SECRET_KEY_MIN_UNIQUE_CHARACTERS:
        raise ImproperlyConfigured(
            f"SECRET_KEY is weak ({len(key)} characters, {len(set(key))} different); it "
            f"needs at least {SECRET_KEY_MIN_LENGTH} characters and "
            f"{SECRET_KEY_MIN_UNIQUE_CHARACTERS} different ones: set it to a long random "
            "value, e.g. python -c 'import secrets; print(secrets.token_urlsafe(50))'"
        )


def warn_about_site_url() -> None:
    """Once, as the web server starts: a SITE_URL that looks wrong for a deployment
    (revreview/checks.py) makes every link in the alerts point nowhere."""
    from revreview.checks import site_url_check

    for warning in site_url_check():
        logging.getLogger("revreview").warning("%s %s (%s)", warning.msg, warning.hint, warning.id)


require_secret_key()
warn_about_site_url()
