"""The groups dedup's rules start from, queried over the columns (dedup_groups): their
order is the findings' order, which the record-by-record rules set, and the records a
query must leave out. No database."""

from __future__ import annotations

from reviews.engine.rules import Rules
from reviews.engine.specialists import attribution, dedup, freshness
from reviews.engine.specialists.dedup_groups import dedup_groups
from reviews.engine.specialists.people import clustered_blocks, fuzzy_person_pairs, person_blocks
from reviews.engine.tables.columns import columns
from tests.engine.specialists.factories import company, contact, day, deal, make_batch

RULES = Rules()
COMPANIES = [company("co_a", name="Alpha"), company("co_b", name="Beta")]


def ids_by_kind(batch, kind):
    return [f.record_ids for f in dedup.detect(batch, RULES) if f.kind == kind]


def copy(id, company_id, **fields):
    base = {"name": "Renewal", "amount": 1000, "stage": "contractsent"}
    return deal(id, company_id=company_id, close_date=day("2026-07-31"), **{**base, **fields})


def test_a_closed_lost_deal_places_its_company_though_it_is_no_copy():
    # co_b's second deal (row 2) is closed-lost: co_b still comes before co_a, whose
    # second deal is row 3, as grouping every deal by company always ordered them.
    batch = make_batch(
        companies=COMPANIES,
        deals=[
            copy("dl_a1", "co_a"),
            copy("dl_b1", "co_b"),
            copy("dl_b2", "co_b", name="Lost one", stage="closedlost"),
            copy("dl_a2", "co_a"),
            copy("dl_b3", "co_b"),
        ],
    )
    assert ids_by_kind(batch, "deal_entered_twice") == [["dl_b1", "dl_b3"], ["dl_a1", "dl_a2"]]


def test_a_company_with_one_open_deal_has_no_block():
    batch = make_batch(
        companies=COMPANIES,
        deals=[copy("dl_a1", "co_a"), copy("dl_a2", "co_a", stage="closedlost")],
    )
    assert len(dedup_groups(batch)["deal_block"].keys) == 0


def test_an_unnamed_contact_places_its_company():
    # co_b's second contact (row 2) has no name; its named pair comes after co_a's.
    batch = make_batch(
        companies=COMPANIES,
        contacts=[
            contact("ct_a1", first_name="Dana", last_name="Kim", company_id="co_a"),
            contact("ct_b1", first_name="Ann", last_name="Lee", company_id="co_b"),
            contact("ct_b2", company_id="co_b"),
            contact("ct_a2", first_name="Kim", last_name="Dana", company_id="co_a"),
            contact("ct_b3", first_name="ann", last_name="LEE", company_id="co_b"),
        ],
    )
    found = ids_by_kind(batch, "contact_same_person")
    assert found == [["ct_b1", "ct_b3"], ["ct_a1", "ct_a2"]]


def test_contacts_without_a_company_are_never_one_block():
    batch = make_batch(
        companies=COMPANIES,
        contacts=[
            contact("ct_1", first_name="Ann", last_name="Lee", company_id=None),
            contact("ct_2", first_name="Ann", last_name="Lee", company_id=""),
            contact("ct_3", first_name="Ann", last_name="Lee", company_id=""),
        ],
    )
    assert ids_by_kind(batch, "contact_same_person") == []


def test_a_companys_names_come_in_alphabetical_order_each_in_batch_order():
    batch = make_batch(
        companies=COMPANIES,
        contacts=[
            contact("ct_1", first_name="Zoe", last_name="Ng", company_id="co_a"),
            contact("ct_2", first_name="Ann", last_name="Lee", company_id="co_a"),
            contact("ct_3", first_name="Zoe", last_name="Ng", company_id="co_a"),
            contact("ct_4", first_name="Lee", last_name="Ann", company_id="co_a"),
        ],
    )
    names = dedup_groups(batch)["person_key"]
    assert list(names) == [("ann lee", [1, 3], 1), ("ng zoe", [0, 2], 1)]


def test_shared_keys_come_in_the_order_of_their_second_record():
    batch = make_batch(
        companies=[
            company("co_1", domain="one.example"),
            company("co_2", domain="two.example"),
            company("co_3", domain="two.example"),
            company("co_4", domain="one.example"),
        ]
    )
    assert ids_by_kind(batch, "company_same_domain") == [["co_2", "co_3"], ["co_1", "co_4"]]


def test_contact_same_person_visits_only_the_companies_with_a_name_shared_or_near():
    # co_a: two Dana Kims (shared); co_b: two different names (nothing); co_c: Jon and
    # John (a fuzzy pair). Every company with two contacts is a block; two have findings.
    batch = make_batch(
        companies=[*COMPANIES, company("co_c", name="Gamma")],
        contacts=[
            contact("ct_1", company_id="co_a", first_name="Dana", last_name="Kim"),
            contact("ct_2", company_id="co_b", first_name="Ann", last_name="Lee"),
            contact("ct_3", company_id="co_c", first_name="Jonathan", last_name="Smith"),
            contact("ct_4", company_id="co_a", first_name="Kim", last_name="Dana"),
            contact("ct_5", company_id="co_b", first_name="Bo", last_name="Chan"),
            contact("ct_6", company_id="co_c", first_name="Jonathon", last_name="Smith"),
        ],
    )
    blocks = person_blocks(batch)
    fuzzy = fuzzy_person_pairs(blocks, RULES.person_name_fuzzy_ratio, RULES.fuzzy_window)

    assert blocks.company_ids == ["co_a", "co_b", "co_c"]
    assert clustered_blocks(blocks, fuzzy) == [0, 2]
    assert ids_by_kind(batch, "contact_same_person") == [["ct_1", "ct_4"], ["ct_3", "ct_6"]]


def test_the_company_keys_are_made_only_by_the_tasks_that_compare_them():
    # freshness reads companies but compares neither names nor domains, attribution
    # compares domains only: each key (a second or more per million records) is a table
    # of its own, made when a query names it.
    batch = make_batch(
        companies=[company("co_1", name="Acme Inc"), company("co_2", name="ACME")],
        contacts=[contact("ct_1", first_name="Dana", last_name="Kim", company_id="co_1")],
    )
    freshness.detect(batch, RULES)
    assert "companies" in columns(batch).loaded
    assert not {"companies_domain_key", "companies_name_key"} & columns(batch).loaded
    attribution.detect(batch, RULES)
    assert "companies_domain_key" in columns(batch).loaded
    assert not {"companies_name_key", "contacts_person_key"} & columns(batch).loaded

    assert ids_by_kind(batch, "company_same_name") == [["co_1", "co_2"]]
    assert {"companies_name_key", "contacts_person_key"} <= columns(batch).loaded
