"""The gateway's own cost beside ours: OpenRouter's usage.cost travels from the loopback
gateway through the real client into the ledger row, and /spend/ shows both with the
difference. Cached tokens are priced at the model's own cached rate, computed here."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

import pytest

from ledger import reports
from ledger.availability import mark_unavailable
from ledger.models import LedgerEntry
from reviews.engine.money import format_cost
from reviews.llm.chain import call_with_failback
from reviews.llm.roster import CHEAP, MID
from reviews.llm.schemas import SpecialistReply
from tests.llm.fake_gateway import completion

pytestmark = pytest.mark.django_db

MESSAGES = [{"role": "user", "content": "task"}]
GOOD = {"add": [], "adjust": [], "dismiss": []}
# USD per 1M tokens (input, cached input, output), from Google's pricing page as cited
# in ledger/migrations/0004: written out here, not read from ledger.rates.
RATES = {CHEAP: ("0.25", "0.025", "1.50"), MID: ("1.50", "0.15", "9.00")}


def micros(model: str, prompt: int, cached: int, output: int) -> int:
    usd_in, usd_cached, usd_out = (Decimal(r) for r in RATES[model])
    total = (prompt - cached) * usd_in + cached * usd_cached + output * usd_out
    return int(total.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def call(model: str):
    return call_with_failback("dedup", model, MESSAGES, SpecialistReply)


@pytest.mark.parametrize("model", [CHEAP, MID])
def test_cached_tokens_are_priced_at_the_models_cached_rate(llm_settings, fake_gateway, model):
    fake_gateway.script(
        model, completion(GOOD, prompt_tokens=50_000, cached_tokens=40_000, completion_tokens=700)
    )
    call(model)
    (row,) = LedgerEntry.objects.all()
    assert row.cost_micros == micros(model, 50_000, 40_000, 700)
    # The seed's 25%-of-input cached rate would have priced it higher.
    usd_in = Decimal(RATES[model][0])
    at_a_quarter = 10_000 * usd_in + 40_000 * usd_in / 4 + 700 * Decimal(RATES[model][2])
    assert row.cost_micros < at_a_quarter


def test_the_gateway_cost_is_stored_beside_ours(llm_settings, fake_gateway):
    fake_gateway.script(
        CHEAP,
        completion(
            GOOD, prompt_tokens=4200, cached_tokens=3000, completion_tokens=310, cost=0.00091
        ),
    )
    call(CHEAP)
    (row,) = LedgerEntry.objects.all()
    assert row.cost_micros == micros(CHEAP, 4200, 3000, 310) == 840
    assert row.gateway_cost_micros == 910


def test_a_reply_without_a_cost_stores_none(llm_settings, fake_gateway):
    fake_gateway.script(CHEAP, completion(GOOD))
    call(CHEAP)
    assert LedgerEntry.objects.get().gateway_cost_micros is None


def test_spend_page_shows_both_costs_and_the_difference(
    llm_settings, fake_gateway, client, django_user_model
):
    fake_gateway.script(
        CHEAP,
        completion(
            GOOD, prompt_tokens=4200, cached_tokens=3000, completion_tokens=310, cost=0.00091
        ),
        completion(GOOD, prompt_tokens=1000, completion_tokens=100, cost=0.0004),
        completion(GOOD, prompt_tokens=1000, completion_tokens=100),  # no cost: left out
    )
    for _ in range(3):
        call(CHEAP)
    ours = micros(CHEAP, 4200, 3000, 310) + micros(CHEAP, 1000, 0, 100)
    theirs = 910 + 400

    ((name, usage),) = reports.spend_report(1).reconciliation
    assert (name, usage.gateway_calls) == (CHEAP, 2)
    assert (usage.reconciled_cost_micros, usage.gateway_cost_micros) == (ours, theirs)

    client.force_login(django_user_model.objects.create_user("ana", password="x" * 12))
    page = client.get("/spend/").content.decode()
    table = page[page.index('id="spend-reconciliation"') :]
    table = table[: table.index("</table>")]
    cells = re.findall(r'<td class="num">([^<]*)</td>', table)
    # Written as every cost on the pages is (reviews.engine.money.format_cost).
    assert cells == [
        "2",
        format_cost(Decimal(ours) / 1_000_000),
        format_cost(Decimal(theirs) / 1_000_000),
        format_cost(Decimal(theirs - ours) / 1_000_000),
    ]
    assert cells[1].startswith("$")


def test_spend_page_names_an_unavailable_model_with_the_gateways_words(client, django_user_model):
    mark_unavailable(
        "google/gemini-2.0-flash", "HTTP 404: No endpoints found for google/gemini-2.0-flash."
    )
    client.force_login(django_user_model.objects.create_user("ana", password="x" * 12))
    page = client.get("/spend/").content.decode()
    notice = page[page.index('id="unavailable-models"') :]
    assert "google/gemini-2.0-flash" in notice and "No endpoints found" in notice
    assert "first seen" in notice


def test_spend_page_has_no_notice_or_reconciliation_without_them(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("ana", password="x" * 12))
    page = client.get("/spend/").content.decode()
    assert 'id="unavailable-models"' not in page
    assert 'id="spend-reconciliation"' not in page
