"""Text in a record that tries to instruct the reviewer (DESIGN principle 6).

The boundary (reviews.llm.boundary) keeps record text from passing as our markup; this
is the second guard, on what comes back: a model that obeyed such text would dismiss
or play down the very finding the text is attached to. So a dismissal (or a lowering,
or a coordinator's drop) of a finding whose records carry such text is refused
(reviews.llm.apply), whatever the model's reason.

The patterns are a small maintained list, tested against an injection corpus and
against ordinary CRM values that must not match (tests/llm/test_injection.py). They
look for the reviewer being addressed ("ignore previous instructions", "you are now",
"approve this batch", "do not flag"), not for single words a company may be named
after ("Override Labs", "System Integrators", "Approve Mortgage").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from typing import Any

from reviews.engine.batch import Batch

_ANY = r"(?:all|any|the|your|my|these|those|previous|prior|above|earlier|preceding|former)"
_RULES = r"(?:instructions?|rules?|prompts?|directions?|guidelines?|context|messages?|orders?)"
_BATCH = r"(?:batch|export|sync|upload|data|dataset|records?|deals?|review|changes?|this|it)"
PATTERNS: tuple[str, ...] = (
    # "ignore previous instructions", "disregard all prior rules", "forget the above"
    rf"\b(?:ignore|disregard|forget|override|bypass|skip)\s+(?:{_ANY}\s+){{0,3}}{_RULES}\b",
    rf"\b(?:ignore|disregard|forget)\s+(?:{_ANY}\s+){{1,3}}(?:text|said|above|everything)\b",
    # "new instructions:", "follow these instructions", "system prompt"
    r"\bnew\s+(?:instructions?|directives?|task)\s*[:\-]",
    r"\b(?:follow|obey)\s+(?:these|the|my|new|following)\s+(?:new\s+)?(?:instructions?|orders?)\b",
    r"\b(?:system|developer|hidden|secret)\s+(?:prompt|message|instructions?)\b",
    # addressing the model: "you are now", "as an AI", "act as the reviewer"
    r"\byou\s+(?:are|must|should|will|shall)\s+(?:now\s+)?(?:a|an|the|approve|dismiss|ignore|"
    r"not|never|only|mark|rate|treat|say|reply|respond|output|return)\b",
    r"\byou\s+are\s+now\b",
    r"\bas\s+an?\s+(?:ai|llm|language\s+model|assistant|reviewer)\b",
    r"\b(?:act|behave|pretend)\s+(?:as|like)\s+(?:an?\s+|the\s+)?(?:ai|assistant|reviewer|system|admin)",
    # what an attacker wants from a reviewer: approve, dismiss, do not flag, lower
    rf"\bapprove\s+(?:this|the|all|every|these)\s+{_BATCH}\b",
    r"\bdismiss\s+(?:this|the|all|every|these|any|f\d+)\b",
    r"\b(?:do\s+not|don'?t|never|stop)\s+(?:flag|report|mention|raise|list|include)\b",
    r"\b(?:mark|rate|treat|classify|label)\s+(?:this|it|these|them|all)\s+(?:as\s+)?"
    r"(?:valid|fine|ok|okay|clean|safe|approved|a\s+suggestion|low)\b",
    r"\b(?:lower|downgrade|reduce)\s+(?:the\s+|its\s+|all\s+)?severity\b",
    r"\bnot\s+a\s+(?:duplicate|problem|issue)\b.*\b(?:reviewer|model|ai|assistant)\b",
    r"\bverdict\s*[:=]\s*approve\b",
    # chat-template and role markup, in any spelling the boundary strips
    r"<\|\s*im\s?(?:start|end)\s*\|>|<\|\s*(?:system|user|assistant|endoftext)\s*\|>",
    r"</?\s*(?:system|assistant|developer|instructions?)\s*>",
    r"\[/?(?:inst|system)\]",
)
_PATTERN = re.compile("|".join(f"(?:{p})" for p in PATTERNS), re.IGNORECASE | re.DOTALL)
# Zero-width and bidi controls an attacker can slip between letters to dodge a pattern.
_INVISIBLE = dict.fromkeys(
    [0x00AD, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
)
_MAX_TEXT = 4000  # of one value: a pattern sits near the start of a field, if anywhere


def normalise(text: str) -> str:
    """NFKC (full-width and styled letters to plain ones), invisible characters gone,
    whitespace and `_`/`-` runs collapsed to one space, case folded."""
    text = unicodedata.normalize("NFKC", text[:_MAX_TEXT]).translate(_INVISIBLE)
    return " ".join(re.sub(r"[_\s]+", " ", text).split()).casefold()


def instructs(text: str) -> bool:
    """Whether `text` reads as an instruction to the reviewer."""
    return bool(text) and _PATTERN.search(normalise(text)) is not None


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def record_texts(record: Any) -> Iterator[str]:
    """Every string a record carries: its named fields and its extra ones."""
    for name in record.__slots__:
        if name != "index":
            yield from _strings(getattr(record, name))


def instructing_records(batch: Batch, record_ids: Iterable[str]) -> list[str]:
    """The ids among `record_ids` whose records carry text that instructs the reviewer."""
    wanted = set(record_ids)
    found: list[str] = []
    for records in (batch.companies, batch.contacts, batch.deals):
        for record in records:
            if record.id in wanted and any(instructs(t) for t in record_texts(record)):
                found.append(record.id)
    return sorted(found)
