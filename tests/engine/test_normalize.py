"""Identity normalisation (docs/rules.md): what the dedup keys are made of."""

from __future__ import annotations

import re
import unicodedata

import pytest
from anyascii import anyascii
from hypothesis import given, settings
from hypothesis import strategies as st

from reviews.engine import normalize


def reference_fold(value: str) -> str:
    """The fold as docs/rules.md words it, written the slow, obvious way: NUL, lone
    surrogates and their escape text left out first."""
    value = re.sub(r"\\u(0000|d[89a-f][0-9a-f]{2})|[\x00\ud800-\udfff]", "", value, flags=re.I)
    text = normalize._to_ascii(value).casefold()
    text = text.replace(".", "").replace(",", "").replace("'", "")
    return re.sub(r"[^a-z0-9]+", " ", text).strip()


def reference_to_ascii(value: str) -> str:
    """Accents folded by their definition: NFKD, then every combining mark dropped."""
    text = value.translate(normalize._PUNCTUATION)
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return text if text.isascii() else anyascii(text)


@settings(max_examples=1000, deadline=None)
@given(st.text() | st.text(alphabet="aeiouAÉèñçøßĳ\u0301\u0327\u20d7\u1dc0 -"))
def test_to_ascii_matches_its_definition(value: str) -> None:
    assert normalize._to_ascii(value) == reference_to_ascii(value)


@pytest.mark.parametrize(
    ("value", "folded"),
    [
        ("Vertex Robotics, LLC", "vertex robotics llc"),
        ("  S.A.  ", "sa"),
        ("O'Brien\tand\nSons", "obrien and sons"),
        ("Müller–Lüdenscheidt GmbH", "muller ludenscheidt gmbh"),
        ("株式会社", "zhushihuishe"),
        ("...", ""),
    ],
)
def test_fold(value: str, folded: str) -> None:
    assert normalize._fold(value) == folded


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_fold_matches_its_definition_for_any_text(value: str) -> None:
    assert normalize._fold(value) == reference_fold(value)


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.none(), st.text()))
def test_word_set_key_is_the_sorted_words_of_the_folded_text(value: str | None) -> None:
    folded = normalize.text(value)
    expected = normalize.sorted_words(folded) if folded else None
    assert normalize.word_set_key(value) == expected


def test_word_set_key_orders_words() -> None:
    assert normalize.word_set_key("Kim, Dana") == normalize.word_set_key("dana KIM") == "dana kim"
    assert normalize.word_set_key(" ... ") is None


def test_company_name_drops_legal_suffixes() -> None:
    assert normalize.company_name("Vertex Robotics, LLC") == "vertex robotics"
    assert normalize.company_name("vertex robotics") == "vertex robotics"
    assert normalize.company_name("GmbH") == "gmbh"  # a name that is only a suffix stays
