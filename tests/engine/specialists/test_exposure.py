"""Exposure: the open deals with an amount over zero, read from the deals' columns, are
the ones Batch.is_open and the amount itself say, in the batch's order."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from reviews.engine.specialists.common import Exposure
from tests.engine.specialists.factories import deal, make_batch, pipeline, stage

PIPELINE = pipeline(
    stages=[
        stage("open"),
        stage("won", closed=True, won=True),
        stage("lost", closed=True),
    ]
)


def record_by_record(batch) -> tuple[dict, dict, dict, dict]:
    """What Exposure holds, as the records themselves say it."""
    by_company, by_contact, by_deal, currencies = defaultdict(list), defaultdict(list), {}, {}
    for d in batch.deals:
        if batch.is_open(d) and d.amount and d.amount > 0:
            by_deal[d.id] = d.amount
            currencies[d.id] = batch.currency_of(d)
            if d.company_id:
                by_company[d.company_id].append(d.id)
            for contact_id in d.contact_ids:
                by_contact[contact_id].append(d.id)
    return dict(by_company), dict(by_contact), by_deal, currencies


def test_exposure_counts_open_deals_with_an_amount_over_zero_in_order():
    deals = [
        deal("dl_open", company_id="co_1", stage="open", amount=100, contact_ids=["ct_1"]),
        deal("dl_won", company_id="co_1", stage="won", amount=200),
        deal("dl_lost", company_id="co_1", stage="lost", amount=300),
        deal("dl_unknown", company_id="co_2", stage="nowhere", amount=5, currency="EUR"),
        deal("dl_no_stage", company_id="co_1", amount=7, contact_ids=["ct_1", "ct_1"]),
        deal("dl_zero", company_id="co_1", stage="open", amount=0),
        deal("dl_negative", company_id="co_1", stage="open", amount=-50),
        # Under DECIMAL(38, 6)'s last place: its sign, not the rounded column, decides.
        deal("dl_tiny", company_id="co_3", stage="open", amount=Decimal("1E-9")),
        deal("dl_no_amount", company_id="co_1", stage="open"),
        deal("dl_no_company", stage="open", amount=9, contact_ids=["ct_2"]),
    ]
    batch = make_batch(deals=deals, pipelines=[PIPELINE])

    exposure = Exposure(batch)

    by_company, by_contact, by_deal, currencies = record_by_record(batch)
    assert list(by_deal) == ["dl_open", "dl_unknown", "dl_no_stage", "dl_tiny", "dl_no_company"]
    assert dict(exposure.by_company) == by_company
    assert dict(exposure.by_contact) == by_contact
    assert by_contact == {
        "ct_1": ["dl_open", "dl_no_stage", "dl_no_stage"],
        "ct_2": ["dl_no_company"],
    }
    assert list(exposure.by_deal.items()) == list(by_deal.items())
    assert exposure.by_deal["dl_tiny"] is deals[7].amount  # the record's own Decimal
    assert exposure.currencies == currencies
    assert exposure.currencies["dl_unknown"] == "EUR"
