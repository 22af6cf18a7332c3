"""A connection's access token, encrypted at rest with Fernet (the `cryptography`
package): AES-128-CBC with an HMAC-SHA256, under keys from HUBSPOT_TOKEN_KEYS.

HUBSPOT_TOKEN_KEYS is a comma-separated list of Fernet keys (`Fernet.generate_key()`),
newest first: tokens are encrypted with the first and read with any (MultiFernet), so a
key is rotated by putting a new one first, running `manage.py hubspot_rotate_tokens`
(re-encrypts every token under the first key), then dropping the old one. Unset, one key
is derived from SECRET_KEY, so a deployment works out of the box, and rotating
SECRET_KEY needs the old derived key kept in the list until the rotation ran."""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings


class TokenUnreadable(Exception):
    """No key in HUBSPOT_TOKEN_KEYS opens this token: reconnect the dataset."""


def _keys() -> MultiFernet:
    configured = [k.strip() for k in settings.HUBSPOT_TOKEN_KEYS.split(",") if k.strip()]
    if not configured:
        digest = hashlib.sha256(b"revreview hubspot tokens:" + settings.SECRET_KEY.encode())
        configured = [base64.urlsafe_b64encode(digest.digest()).decode()]
    return MultiFernet([Fernet(key.encode()) for key in configured])


def encrypt(token: str) -> bytes:
    return _keys().encrypt(token.encode())


def decrypt(sealed: bytes) -> str:
    try:
        return _keys().decrypt(bytes(sealed)).decode()
    except InvalidToken:
        raise TokenUnreadable(
            "the stored HubSpot token cannot be decrypted with HUBSPOT_TOKEN_KEYS: "
            "connect the dataset again"
        ) from None


def rotate(sealed: bytes) -> bytes:
    """The token under the first key."""
    return _keys().rotate(bytes(sealed))
