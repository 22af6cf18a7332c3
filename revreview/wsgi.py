import logging
import os

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "revreview.settings")
application = get_wsgi_application()


def require_secret_key() -> None:
    """A web server (gunicorn, runserver) with DEBUG off refuses to start on a known
    SECRET_KEY: anyone could forge its sessions and CSRF tokens."""
    if not settings.DEBUG and settings.SECRET_KEY in settings.DEFAULT_SECRET_KEYS:
        raise ImproperlyConfigured(
            "SECRET_KEY is the built-in default; set SECRET_KEY to a long random value "
            "(or DEBUG=true for local development)"
        )


def warn_about_site_url() -> None:
    """Once, as the web server starts: a SITE_URL that looks wrong for a deployment
    (revreview/checks.py) makes every link in the alerts point nowhere."""
    from revreview.checks import site_url_check

    for warning in site_url_check():
        logging.getLogger("revreview").warning("%s %s (%s)", warning.msg, warning.hint, warning.id)


require_secret_key()
warn_about_site_url()
