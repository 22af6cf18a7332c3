"""Salesforce record ids: 15 characters, case-sensitive (reports, the UI), or 18, the same
id with a 3-character suffix that makes it case-insensitive (the API, Data Loader, the
weekly Data Export). Every id is kept in its 18-character form, so a report's 15-character
ids name the same records as an export's 18-character ones."""

from __future__ import annotations

import re

_SHAPE = re.compile(r"[0-9A-Za-z]{15}(?:[0-9A-Za-z]{3})?")
_SUFFIX = "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"


# Each letter or digit as its bit: 1 for an upper-case letter.
_BIT = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "1" * 26 + "0" * 36
)


def checksum(id15: str) -> str:
    """Salesforce's suffix of a 15-character id: for each 5-character chunk, a bit per
    character (1 for an upper-case letter), the first character the lowest bit, read as
    an index into A-Z0-5."""
    bits = id15.translate(_BIT)
    return (
        _SUFFIX[int(bits[4::-1], 2)]
        + _SUFFIX[int(bits[9:4:-1], 2)]
        + _SUFFIX[int(bits[14:9:-1], 2)]
    )


def to18(value: str) -> str | None:
    """The 18-character id of a 15- or 18-character one (an 18-character id's suffix is
    worked out again: a tool may have changed it); None if `value` is not an id."""
    text = value.strip()
    if not _SHAPE.fullmatch(text) or not text.isascii():
        return None
    return text[:15] + checksum(text[:15])


def key_prefix(record_id: str) -> str:
    """The object's key prefix: 001 account, 003 contact, 006 opportunity, 00Q lead, 005
    user, 00G queue."""
    return record_id[:3]
