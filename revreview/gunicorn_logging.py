"""gunicorn's access log without credentials: a token, key, password or signature sent
in the query string (`?token=...`, which the API refuses, but only after the request
line was logged) is written as `token=[redacted]`. gunicorn.conf.py (read from the
working directory, as gunicorn does by default) names this logger class."""

from __future__ import annotations

import re
from typing import Any

from gunicorn.glogging import Logger

# Query parameters whose value is a credential, by name (case-insensitive).
SECRET_PARAMETERS = (
    "token", "access_token", "api_key", "apikey", "key", "secret", "password", "passwd",
    "auth", "authorization", "signature", "sig", "session", "sessionid", "code",
)  # fmt: skip
_SECRET = re.compile(
    r"(?i)((?:^|[?&;])(?:%s)=)[^&;#\s]*" % "|".join(re.escape(p) for p in SECRET_PARAMETERS)  # noqa: UP031
)
REDACTED = "[redacted]"


def redact(text: str) -> str:
    """`text` (a query string or a request line) with credential values replaced."""
    if "=" not in text:
        return text
    return _SECRET.sub(lambda m: m.group(1) + REDACTED, text)


class RedactingLogger(Logger):
    def atoms(self, resp: Any, req: Any, environ: dict, request_time: Any) -> dict:
        atoms = super().atoms(resp, req, environ, request_time)
        for name in ("r", "q", "U"):  # the request line, the query string, the URL
            if atoms.get(name):
                atoms[name] = redact(atoms[name])
        return atoms
