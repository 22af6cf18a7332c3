"""Each CRM's words for the objects a review names: Salesforce says Account and
Opportunity where HubSpot (and revreview's own docs) say company and deal. The one place
they are swapped: findings' text as each detector gives them
(reviews.engine.specialists.detector) and the headings of a run's kinds
(reviews.web.findings_page). A HubSpot batch's text is never touched."""

from __future__ import annotations

import re

HUBSPOT = "hubspot"
SALESFORCE = "salesforce"

# Plural first: "companies" is not "company" + "ies".
WORDS: dict[str, dict[str, str]] = {
    SALESFORCE: {
        "companies": "accounts",
        "company": "account",
        "deals": "opportunities",
        "deal": "opportunity",
    },
}
_PATTERNS = {
    crm: re.compile(r"\b(" + "|".join(words) + r")\b", re.IGNORECASE)
    for crm, words in WORDS.items()
}


def crm_of(source: str | None) -> str:
    """The CRM a batch's source names: salesforce-export, salesforce-report -> salesforce;
    anything else (hubspot-csv, hubspot-api, a JSON batch's own) -> hubspot."""
    return SALESFORCE if (source or "").startswith(SALESFORCE) else HUBSPOT


def in_words(text: str, crm: str) -> str:
    """`text` in the CRM's words, keeping each word's capitals ("Deal" -> "Opportunity")."""
    pattern = _PATTERNS.get(crm)
    if pattern is None or not text:
        return text
    words = WORDS[crm]
    return pattern.sub(lambda m: _cased(words[m.group(0).casefold()], m.group(0)), text)


def _cased(word: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return word.upper()
    return word[0].upper() + word[1:] if like[0].isupper() else word
