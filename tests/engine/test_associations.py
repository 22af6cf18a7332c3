"""The survivor rule's association counts (survivor.Associations), counted over the
detector tables, against their definition record by record: a company's contacts and
deals (its primary, or one more of theirs, each entry once more), a contact's deals
(once per deal) and companies, a deal's companies and contacts."""

from __future__ import annotations

from collections import Counter
from itertools import chain

from hypothesis import given, settings
from hypothesis import strategies as st

from reviews.engine.batch import Batch, Company, Contact, Deal
from reviews.engine.fixes.survivor import Associations, association_counts, companies_of
from tests.engine.specialists.factories import company, contact, deal, make_batch

COMPANY_IDS = ["co_1", "co_2", "co_3", "co_gone"]  # co_gone is named, never listed
CONTACT_IDS = ["ct_1", "ct_2", "ct_3", "ct_gone"]

primary = st.one_of(st.none(), st.sampled_from(COMPANY_IDS))
others = st.lists(st.sampled_from(COMPANY_IDS), max_size=4)  # the primary again, twice


def by_definition(batch: Batch, record: Company | Contact | Deal) -> int:
    """What the survivor rule counts, one record at a time."""
    if isinstance(record, Company):
        return sum(companies_of(r).count(record.id) for r in chain(batch.contacts, batch.deals))
    if isinstance(record, Contact):
        deals = sum(record.id in d.contact_ids for d in batch.deals)
        return deals + len(companies_of(record))
    return len(companies_of(record)) + len(set(record.contact_ids))


@settings(max_examples=60, deadline=None)
@given(
    contacts=st.lists(st.tuples(primary, others), max_size=3),
    deals=st.lists(
        st.tuples(primary, others, st.lists(st.sampled_from(CONTACT_IDS), max_size=4)),
        max_size=5,
    ),
    positions=st.booleans(),
)
def test_the_counts_are_the_rule_record_by_record(contacts, deals, positions):
    # `positions`: each record's index its position (a JSON batch), or not (a CSV's lines)
    index = {} if positions else {"index": 7}
    batch = make_batch(
        companies=[company(i, **index) for i in COMPANY_IDS[:3]],
        contacts=[
            contact(i, company_id=p, company_ids=o, **index)
            for i, (p, o) in zip(CONTACT_IDS, contacts, strict=False)
        ],
        deals=[
            deal(f"dl_{n}", company_id=p, company_ids=o, contact_ids=c, **index)
            for n, (p, o, c) in enumerate(deals)
        ],
    )
    counts = Associations(batch)
    for record in chain(batch.companies, batch.contacts, batch.deals):
        assert counts.of(record) == by_definition(batch, record), record.id


def test_a_company_named_by_many_records():
    batch = make_batch(
        companies=[company("co_1"), company("co_2")],
        contacts=[
            contact("ct_1", company_id="co_1", company_ids=["co_1", "co_2", "co_2"]),
            contact("ct_2", company_ids=["co_1"]),
        ],
        deals=[
            deal("dl_1", company_id="co_1", contact_ids=["ct_1", "ct_1", "ct_2"]),
            deal("dl_2", company_id="co_2", contact_ids=["ct_1"]),
        ],
    )
    counts = association_counts(batch)
    co_1, co_2 = batch.companies
    ct_1, ct_2 = batch.contacts
    # ct_1's primary, ct_2's other, dl_1's primary; ct_1 naming its primary again is not
    assert counts.of(co_1) == 3
    assert counts.of(co_2) == 3  # twice in ct_1's list, and dl_2's primary
    assert counts.of(ct_1) == 2 + 3  # two deals (dl_1 names it twice), three companies
    assert counts.of(ct_2) == 1 + 1
    assert Counter(counts.of(d) for d in batch.deals) == Counter({1 + 2: 1, 1 + 1: 1})
