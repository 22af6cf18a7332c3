"""The X-Revreview-Signature header: `t=<unix seconds>,v1=<hex>`, where hex is the
HMAC-SHA256, under the subscription's secret, of `<t>.` followed by the body bytes.
The timestamp is signed with the body, so a receiver that rejects old timestamps
(TOLERANCE_SECONDS) cannot be fed a replayed delivery."""

from __future__ import annotations

import hashlib
import hmac
import time

HEADER = "X-Revreview-Signature"
TOLERANCE_SECONDS = 300


def signature(secret: str, body: bytes, timestamp: int) -> str:
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


def sign(secret: str, body: bytes, *, now: float | None = None) -> str:
    return signature(secret, body, int(time.time() if now is None else now))


def verify(
    secret: str,
    header: str,
    body: bytes,
    *,
    now: float | None = None,
    tolerance: int = TOLERANCE_SECONDS,
) -> bool:
    """What a receiver does: the signature matches and its timestamp is recent."""
    try:
        parts = dict(item.split("=", 1) for item in header.split(","))
        timestamp = int(parts["t"])
        given = parts["v1"]
    except (KeyError, ValueError):
        return False
    now = time.time() if now is None else now
    if abs(now - timestamp) > tolerance:
        return False
    expected = signature(secret, body, timestamp).split("v1=", 1)[1]
    return hmac.compare_digest(expected, given)
