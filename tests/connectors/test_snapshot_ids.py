"""A snapshot orders its records' ids as numbers without int() (issue 40): an id of
5,000 digits, or a digit int() refuses ("²"), is ordered, not a crash."""

from __future__ import annotations

from connectors.hubspot import snapshot

HUGE = "9" * 5000


def test_the_document_orders_ids_as_numbers_then_text():
    deals = {rid: {"id": rid} for rid in (HUGE, "10", "\u00b2", "9", "dl_1")}

    ordered = [deal["id"] for deal in snapshot.document({"deals": deals})["deals"]]

    assert ordered == ["9", "10", HUGE, "dl_1", "\u00b2"]


def test_associations_put_the_primary_first_then_ids_in_number_order():
    deal: dict = {"id": "5001"}

    snapshot.set_associations(
        deal, "companies", [(HUGE, False), ("10", False), ("7", True)], "deals"
    )

    assert [a["id"] for a in deal["associations"]["companies"]["results"]] == ["7", "10", HUGE]
