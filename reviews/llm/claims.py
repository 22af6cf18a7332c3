"""Whether a model's own words claim a verdict the rules did not reach.

The verdict is the rules' (reviews.engine.coordinator.decide); a model may make the
review stricter or quieter, never more lenient. Its summary, titles and reasons are
shown beside that verdict, so text that calls the batch approved or clean while the
rules found problems is refused (reviews.llm.apply) and the coordinator's own words
stand. Unlike reviews.llm.injection, which looks at what records say to the reviewer,
this reads what the model wrote, folded hard first: accents and lookalike letters to
ASCII, leetspeak digits to letters, spaces and punctuation removed ("a p p r 0 v e",
"аpprove" in Cyrillic, "tout est en ordre"). A false alarm costs only the model's
wording; a miss would put "approve" beside request_changes.
"""

from __future__ import annotations

import re
import unicodedata

from anyascii import anyascii

# Cyrillic and Greek letters that look like Latin ones, read as the letter they mimic
# (a transliteration would read Cyrillic "р" as "r", not the "p" it shows).
_LOOKALIKES = str.maketrans(
    "аеорсхуіјѕкмтнвАЕОРСХУІЈЅКМТНВαβεικνορτυχΑΒΕΙΚΜΝΟΡΤΥΧ",
    "aeopcxyijskmthbAEOPCXYIJSKMTHBabeiknoptuxABEIKMNOPTYX",
)
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a",
                       "$": "s", "!": "i", "|": "i"})  # fmt: skip
# Claims of approval, folded (lower-case ASCII, no spaces), in the languages a CRM team
# writes in. Stems, so "approved", "approval", "approuvé" match.
_VERDICTS = (
    "approv", "allclear", "lgtm", "goodtogo", "safetoimport", "safetomerge",
    "oktoimport", "oktomerge", "greenlight", "signedoff",
    # French, German, Spanish, Italian, Portuguese, Dutch
    "approuv", "toutestenordre", "genehmig", "freigegeben", "freigeben",
    "allesinordnung", "aprobad", "aprobar", "aprueb", "todoestabien", "tuttoaposto", "aprovad",
    "aprovar", "goedgekeurd",
)  # fmt: skip
# Claims that nothing is wrong: of the batch in a summary or a title, a contradiction;
# in the reason a model gives for quieting one finding ("not a problem"), its opinion.
_CLEAN = (
    "allgood", "allfine", "everythingisfine", "everythingsfine", "everythingok",
    "everythinglooks", "looksgood", "looksfine", "noproblem", "noissue", "nofinding", "noerror",
    "nothingtofix", "nothingwrong", "nothingfound", "nothingtoreport", "cleanbatch",
    "batchisclean", "noactionneeded", "noactionrequired", "nochangesneeded",
    "nochangesrequired", "aucunprobleme", "rienasignaler", "keineproblem", "keinfehler",
    "todobien", "sinproblema", "ningunproblema", "nessunproblema", "semproblema",
    "geenproblem",
)  # fmt: skip
_VERDICT = re.compile("|".join(_VERDICTS))
_ANY_CLAIM = re.compile("|".join(_VERDICTS + _CLEAN))


def fold(text: str) -> str:
    """`text` as lower-case ASCII letters only: lookalikes and accents transliterated,
    leetspeak read as letters, everything else dropped."""
    text = unicodedata.normalize("NFKC", text)
    if not text.isascii():
        text = anyascii(text.translate(_LOOKALIKES))
    text = text.lower().translate(_LEET)
    return re.sub(r"[^a-z]+", "", text)


def claims_approval(text: str, *, of_batch: bool = True) -> bool:
    """Whether `text` calls the batch approved (and, `of_batch`: clean or fine, which a
    reason about one finding may say of that finding)."""
    claims = _ANY_CLAIM if of_batch else _VERDICT
    return bool(text) and claims.search(fold(text)) is not None
