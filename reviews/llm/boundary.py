"""Record fields are untrusted (DESIGN principle 6): they reach a model only as JSON
inside a boundary tag whose name ends in a random suffix made for that call.

Three layers, each enough against a different attempt:
- the suffix is unguessable, so no record can close the real boundary by name;
- anything in the data that looks like one of our tags (a boundary of any suffix, our
  section tags, chat role tags and chat-template tokens) is stripped;
- `<` and `>` are JSON-escaped (\\u003c, \\u003e), so what is left of a tag in the data
  cannot be read as markup at all.
"""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

BOUNDARY_PREFIX = "data-"

# Tags our prompts use (prompts/*.md) and the chat roles.
OUR_TAGS = ("shared_context", "review_rules", "what_not_to_flag", "task", "records")
ROLE_TAGS = ("system", "user", "assistant", "developer", "tool", "function", "instructions")

_TAG = re.compile(
    r"<\s*/?\s*(?:data(?:-[\w-]*)?|" + "|".join(OUR_TAGS + ROLE_TAGS) + r")\b[^<>]*>",
    re.IGNORECASE,
)
_CHAT_TOKEN = re.compile(r"<\|[^<>|]{0,64}\|>")  # <|im_start|>, <|system|>, <|endoftext|>


def new_boundary() -> str:
    """A tag name for one call: data- and 16 random hex digits."""
    return BOUNDARY_PREFIX + secrets.token_hex(8)


def strip_tags(text: str) -> str:
    """Remove our boundary, section and role tags. Repeated until nothing changes, so a
    tag split around another (`</da</data-1>ta-x>`) does not reassemble."""
    while True:
        cleaned = _CHAT_TOKEN.sub("", _TAG.sub("", text))
        if cleaned == text:
            return cleaned
        text = cleaned


def sanitize(value: Any) -> Any:
    """strip_tags on every string in a JSON-like value, keys included."""
    if isinstance(value, str):
        return strip_tags(value)
    if isinstance(value, dict):
        return {sanitize(str(k)): sanitize(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [sanitize(v) for v in value]
    return value


def to_json(value: Any) -> str:
    """Compact JSON with `<` and `>` escaped (they can only occur inside strings)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e")


def wrap(payload: Any, boundary: str) -> str:
    """The payload, sanitised, as JSON inside <boundary> ... </boundary>."""
    return f"<{boundary}>\n{to_json(sanitize(payload))}\n</{boundary}>"
