"""Words an analyst reads beside the API's names: a kind by its heading ("deals: won
without an amount", the snake_case kept in a tooltip), and what a run's mode and tier
mean, for a tooltip instead of the first row (docs/output.md, Modes; docs/rules.md, The
risk tier)."""

from __future__ import annotations

from django import template
from django.conf import settings

from reviews.engine.coverage import kind_words
from reviews.engine.money import format_count
from reviews.engine.vocabulary import HUBSPOT, SALESFORCE, crm_of, in_words

register = template.Library()

MODES = {
    "fresh": "Reviewed now: the detectors ran on this batch, and the model pass where a "
    "gateway is configured.",
    "cached": "Served from the cache: the same batch under the same rules was reviewed "
    "before, and that review is shown; nothing was spent.",
    "failback": "Served by failback: a model was unavailable, over budget or over a rate "
    "limit, so the rules' review (or a failback model's) stands; the reason says which.",
}
TIERS = {
    "trivial": "Trivial tier: a small batch gets the least model attention. The "
    "detectors always run in full; the tier only decides the model pass.",
    "lite": "Lite tier: a middling batch gets some model attention. The detectors always "
    "run in full; the tier only decides the model pass.",
    "full": "Full tier: a big or high-value batch gets the most model attention. The "
    "detectors always run in full.",
}


_ONE = {"companies": "company", "contacts": "contact", "deals": "deal", "leads": "lead"}


@register.filter
def record_counts(batch) -> str:
    """A batch's records by list in its CRM's words: "4 companies, 5 contacts, 1 deal";
    a Salesforce batch's "4 accounts, 5 contacts, 5 opportunities, 5 leads"."""
    listed = ", ".join(
        f"{format_count(n)} {_ONE[name] if n == 1 else name}" for name, n in batch.counts.items()
    )
    return in_words(listed, crm_of(batch.source))


# The columns a stage's state is read from when no pipeline describes it (docs/input.md).
STATE_COLUMNS = {
    HUBSPOT: "Is Closed Won, Is Deal Closed?, Deal probability",
    SALESFORCE: "IsWon, IsClosed, Probability",
}


@register.filter
def state_columns(batch) -> str:
    """The export's own stage-state columns, named as the batch's CRM names them."""
    return STATE_COLUMNS[crm_of(batch.source)]


@register.filter
def kind_label(name: str, crm: str = HUBSPOT) -> str:
    """A kind in words, in the run's CRM's (`f.kind|kind_label:crm`: an account group)."""
    return in_words(kind_words(name, settings.REVIEW_RULES), crm or HUBSPOT)


@register.filter
def mode_help(mode: str) -> str:
    return MODES.get(mode, "")


@register.filter
def tier_help(tier: str) -> str:
    return TIERS.get(tier, "")
