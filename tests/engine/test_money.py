"""Money and counts are formatted in one place (reviews.engine.money, issue 15 item 7)."""

from __future__ import annotations

from decimal import Decimal

from babel.numbers import format_currency
from django.template import Context, Template
from hypothesis import given, settings
from hypothesis import strategies as st

from reviews.engine.at_risk import AtRisk
from reviews.engine.coordinator import summarise
from reviews.engine.findings import RawFinding
from reviews.engine.money import format_amounts, format_cost, format_count, format_money


def test_negative_money_puts_the_sign_before_the_symbol():
    assert format_money(Decimal(-5000)) == "-$5,000"
    assert format_money(Decimal("-5000.5"), "EUR") == "-€5,000.50"
    assert format_money(Decimal("410000"), "GBP") == "£410,000"
    assert format_money(None) == "no amount"


def test_zero_cost_is_not_six_zeros():
    assert format_cost(Decimal(0)) == "$0"
    assert format_cost(Decimal("0.00018")) == "$0.00018"
    assert format_cost(Decimal("12.5")) == "$12.50"
    assert format_cost(None) == "$0"


def test_counts_and_totals_across_currencies():
    assert format_count(6000) == "6,000"
    totals = {"EUR": Decimal(410000), "USD": Decimal(20000)}
    assert format_amounts(totals) == "€410,000 and $20,000"


def test_summary_uses_separators_and_keeps_currencies_apart():
    finding = RawFinding("pipeline", "negative_amount", "critical", "Deal 1", "", ["1"])
    counts = {"companies": 6000, "contacts": 12000, "deals": 1}
    at_risk = AtRisk(by_currency={"EUR": Decimal(5000), "USD": Decimal(700)}, deals=2)

    text = summarise([finding], counts, {"critical": 1}, at_risk, [])

    assert text.startswith("Reviewed 6,000 companies, 12,000 contacts and 1 deal")
    assert "€5,000 and $700 at risk across 2 deals." in text


def test_template_filters_format_through_the_same_functions():
    template = Template(
        "{% load numbers %}{{ a|money:'EUR' }} {{ b|cost }} {{ n|count }} {{ t|amounts }}"
    )
    context = Context({"a": Decimal(-5000), "b": 0, "n": 6000, "t": {"USD": "1.5"}})

    assert template.render(context) == "-€5,000 $0 6,000 $1.50"


@settings(max_examples=500, deadline=None)
@given(
    amount=st.decimals(
        min_value=Decimal("-1e15"), max_value=Decimal("1e15"), allow_nan=False, places=3
    )
    | st.integers(min_value=-(10**15), max_value=10**15),
    currency=st.sampled_from(["USD", "EUR", "GBP", "JPY", "CAD", "CHF", "BRL", "INR", "XYZ"]),
)
def test_money_is_written_as_babel_writes_it(amount, currency):
    value = Decimal(amount)
    pattern = "¤#,##0" if value == value.to_integral_value() else "¤#,##0.00"
    expected = format_currency(
        value, currency, format=pattern, locale="en_US", currency_digits=False
    )

    assert format_money(amount, currency) == expected


def test_times_read_just_now_then_ago():
    from datetime import timedelta

    from django.utils import timezone

    from reviews.templatetags.numbers import ago

    assert ago(timezone.now() - timedelta(seconds=5)) == "just now"
    assert ago(timezone.now() - timedelta(minutes=3)) == "3\xa0minutes ago"
    assert ago(None) == ""


def test_a_currency_with_three_minor_digits_shows_the_third_when_used():
    assert format_money(Decimal("12.345"), "BHD") == "BHD12.345"
    assert format_money(Decimal("-1234.5"), "KWD") == "-KWD1,234.50"
    assert format_money(Decimal("12.34"), "BHD") == "BHD12.34"  # a finding's cents
    assert format_money(Decimal("12.3456"), "BHD") == "BHD12.346"
    assert format_money(Decimal("12.345"), "USD") == "$12.34"  # cents, half to even
