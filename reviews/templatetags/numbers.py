"""Template filters for money and counts: the pages' side of reviews.engine.money.

{% load numbers %}
{{ finding.amount_at_risk|money:finding.currency }}  -> -€5,000
{{ cost.usd|cost }}                                   -> $0 / $0.00018 / $1.25
{{ batch.companies|count }}                           -> 6,000
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django import template
from django.utils import timezone
from django.utils.timesince import timesince

from reviews.engine import money as formats
from reviews.engine.history.compare import standing_sentence

register = template.Library()


def _decimal(value) -> Decimal | None:
    if value is None or value == "":
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


@register.filter
def money(value, currency: str | None = None) -> str:
    amount = _decimal(value)
    return "" if amount is None else formats.format_money(amount, currency or None)


@register.filter
def amounts(value: dict) -> str:
    """{currency: amount} totals, never summed across currencies."""
    parsed = {code: _decimal(amount) or Decimal(0) for code, amount in (value or {}).items()}
    return formats.format_amounts(parsed)


@register.filter
def cost(value) -> str:
    return formats.format_cost(_decimal(value))


@register.filter
def count(value) -> str:
    amount = _decimal(value)
    return "" if amount is None else formats.format_count(amount)


@register.filter
def standing(value: dict | None, run=None) -> str:
    """A run's standing problems as one sentence ('' when nothing stands):
    '1 critical still open since run #11: $410,000.'; given the run
    (`run.standing|standing:run`), not "still open since" the run itself."""
    if run is None:
        return standing_sentence(value or {})
    return standing_sentence(value or {}, run.pk, in_dataset=run.batch.dataset_id is not None)


@register.filter
def standing_banner(value: dict | None, run) -> str:
    """The standing sentence of the verdict banner: without money, which the summary
    beside it gives once (reviews.engine.at_risk)."""
    return standing_sentence(
        value or {}, run.pk, in_dataset=run.batch.dataset_id is not None, money=False
    )


@register.filter
def ago(value) -> str:
    """'just now' within a minute, else Django's '3 hours, 2 minutes ago'."""
    if value is None:
        return ""
    if (timezone.now() - value).total_seconds() < 60:
        return "just now"
    return f"{timesince(value)} ago"
