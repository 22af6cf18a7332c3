"""The one sanitiser: text that cannot be stored, made storable and kept visible.

Postgres text and JSON cannot hold U+0000, and UTF-8 cannot encode a lone surrogate
(U+D800..U+DFFF, which JSON's "\\udXXX" escapes and non-UTF-8 file names produce).
Each such character is replaced by its escape text (NUL -> the six characters
`\\u0000`, U+DC80 -> `\\udc80`): still visible, and still distinct (two ids differing
only there stay different; replacing them all by U+FFFD would make them equal), and
storable. (A value that already held the six characters `\\u0000` reads the same as an
escaped NUL; the ingest reports every value it escaped as an `invalid_value`.)

Used wherever text enters or leaves the engine: the ingest (reviews.engine.ingest.
safe_text walks a parsed batch with it), a model's reply (reviews.llm.apply), the
findings blob (reviews.engine.findings.pack) and the findings writer
(reviews.orchestration.run.findings_store). The API refuses such text in its own query and
form fields instead (reviews.web.api.common.refuse_unstorable): a name to look up is
not data to keep.

A leaf module: it imports nothing from the project."""

from __future__ import annotations

import re
from typing import Any

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
# In JSON, NUL and surrogates can only arrive escaped (raw control characters are not
# valid JSON and raw surrogates are not valid UTF-8); in CSV, NUL arrives as a byte.
_JSON_ESCAPE = re.compile(rb"\\u(?:0000|[dD][89a-fA-F])")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def is_storable(text: str) -> bool:
    if "\x00" in text:
        return False
    if text.isascii():
        return True
    # UTF-8 refuses exactly the surrogates, in C: three times the regex's speed, which
    # counts when the text is a chunk of 5,000 findings' details (findings_store).
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def storable(text: str) -> str:
    """`text` with each NUL or lone surrogate replaced by its \\u escape text; the same
    object when nothing needed it (the common case costs an isascii and a find)."""
    if is_storable(text):
        return text
    return _UNSTORABLE.sub(_escape, text)


def storable_tree(value: Any) -> tuple[Any, bool]:
    """A JSON-like value with every string (dict keys too) made storable, and whether
    any had to change. Unchanged containers are returned as they are; tuples come back
    as lists (as JSON has them)."""
    kind = value.__class__
    if kind is str:
        safe = storable(value)
        return safe, safe is not value
    if kind is list or kind is tuple:
        items = [storable_tree(item) for item in value]
        if any(changed for _, changed in items):
            return [item for item, _ in items], True
        return value, False
    if kind is dict:
        pairs = [(storable_tree(k), storable_tree(v)) for k, v in value.items()]
        if any(kc or vc for (_, kc), (_, vc) in pairs):
            return {k: v for (k, _), (v, _) in pairs}, True
        return value, False
    return value, False


def may_hold_unstorable(data: bytes) -> bool:
    """False when these bytes (a JSON or CSV file) surely decode to storable text."""
    # find, not `in`: an mmap (a mapped ZIP member) reads `in` as a search for one byte
    return data.find(b"\x00") != -1 or _JSON_ESCAPE.search(data) is not None
