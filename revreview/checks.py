"""Start-up checks of the deployment's own settings: deployment checks of Django's
system check framework (`manage.py check --deploy`), which the web server also logs
once when it starts (revreview/wsgi.py). Not on every management command: the CLI
(`manage.py review`) runs with DEBUG off and needs no SITE_URL."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from django.conf import settings
from django.core.checks import Tags, Warning, register

LOCAL_NAMES = {"localhost", "0.0.0.0", "::"}  # noqa: S104 (names compared, not bound)


def _is_local(host: str) -> bool:
    if host in LOCAL_NAMES or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


@register(Tags.security, deploy=True)
def site_url_check(app_configs=None, **kwargs) -> list[Warning]:
    """SITE_URL makes the links in webhook alerts. With DEBUG off (deployed) a loopback
    or plain-http address sends every reader of an alert to a page they cannot open."""
    url = urlsplit(settings.SITE_URL)
    host = url.hostname or ""
    if not url.scheme or not host:
        return [
            Warning(
                f"SITE_URL {settings.SITE_URL!r} is not an absolute URL.",
                hint="Set SITE_URL to where people reach the dashboard, e.g. "
                "https://revreview.example.com",
                id="revreview.W001",
            )
        ]
    if settings.DEBUG:
        return []  # make run: SITE_URL follows HOST and PORT (Makefile)
    found = []
    if _is_local(host):
        found.append(
            Warning(
                f"SITE_URL is {settings.SITE_URL} with DEBUG off: the links in webhook "
                "alerts point at this machine's loopback address.",
                hint="Set SITE_URL to the address people reach the dashboard at.",
                id="revreview.W002",
            )
        )
    elif url.scheme != "https":
        found.append(
            Warning(
                f"SITE_URL is {settings.SITE_URL} with DEBUG off: the dashboard redirects "
                "to HTTPS (SECURE_SSL_REDIRECT), so alert links should use https.",
                hint="Set SITE_URL to the https:// address of the dashboard.",
                id="revreview.W003",
            )
        )
    return found
