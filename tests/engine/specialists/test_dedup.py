"""dedup detector (docs/rules.md): one test per rule and per "must not flag" case. No database."""

from __future__ import annotations

from decimal import Decimal

import pytest

from reviews.engine.batch import ValueProblem
from reviews.engine.rules import Rules
from reviews.engine.specialists import dedup
from tests.engine.specialists.factories import company, contact, day, deal, make_batch

RULES = Rules()  # the engine's defaults: no Django settings


def findings_of(batch, kind=None):
    found = dedup.detect(batch, RULES)
    return [f for f in found if kind is None or f.kind == kind]


def kinds(batch):
    return sorted(f.kind for f in dedup.detect(batch, RULES))


# --- company_same_domain --------------------------------------------------------------


def test_company_same_domain_three_companies_are_one_finding():
    batch = make_batch(
        companies=[
            company("co_201", name="Vertex Robotics", domain="vertexrobotics.example"),
            company("co_203", name="Vertex", domain="https://www.VertexRobotics.example/about"),
            company("co_202", name="VR Inc", domain="vertexrobotics.example."),
            company("co_300", name="Other", domain="other.example"),
        ],
        deals=[
            deal("dl_1", company_id="co_202", amount=410000, stage="contractsent"),
            deal("dl_2", company_id="co_201", amount=5000, stage="closedwon"),
        ],
    )
    [finding] = findings_of(batch)
    assert finding.kind == "company_same_domain"
    assert finding.category == "dedup"
    assert finding.severity == "warning"
    assert finding.record_ids == ["co_201", "co_202", "co_203"]
    assert finding.title == (
        "3 companies share the domain vertexrobotics.example: "
        "Vertex Robotics (co_201), VR Inc (co_202) and Vertex (co_203)"
    )
    assert "co_202" in finding.detail and "VR Inc" in finding.detail
    assert finding.confidence == 1.0
    # Only the open deal counts as pipeline touched.
    assert finding.exposure == {"dl_1": Decimal(410000)}


def test_company_same_domain_keeps_the_company_with_most_links():
    batch = make_batch(
        companies=[
            company("co_1", name="Vertex", domain="vertex.example"),
            company("co_2", name="Vertex Robotics", domain="vertex.example"),
        ],
        contacts=[contact("ct_1", company_id="co_2", email="a@vertex.example")],
    )
    [finding] = findings_of(batch, "company_same_domain")
    assert finding.suggested_fix.startswith("Merge co_1 into co_2")


def test_company_same_domain_ignores_free_mail_domain():
    batch = make_batch(
        companies=[
            company("co_1", name="Dana Kim Consulting", domain="gmail.com"),
            company("co_2", name="Lee Design", domain="www.gmail.com"),
            company("co_3", name="Park Studio", domain="yahoo.co.uk"),
            company("co_4", name="Cho Tax", domain="yahoo.co.uk"),
        ]
    )
    assert findings_of(batch) == []


# --- company_same_name ------------------------------------------------------------------


def test_company_same_name_with_different_or_missing_domains():
    batch = make_batch(
        companies=[
            company("co_1", name="Vertex Robotics, LLC", domain="vertexrobotics.example"),
            company("co_2", name="vertex robotics", domain="vertex-robotics.example"),
            company("co_3", name="Vértex Robotics Inc.", domain=None),
        ]
    )
    [finding] = findings_of(batch)
    assert finding.kind == "company_same_name"
    assert finding.severity == "warning"
    assert finding.record_ids == ["co_1", "co_2", "co_3"]
    assert finding.title.startswith("3 companies share the name")


def test_company_same_name_not_repeated_when_the_domain_is_shared():
    batch = make_batch(
        companies=[
            company("co_1", name="Vertex Robotics", domain="vertexrobotics.example"),
            company("co_2", name="Vertex Robotics LLC", domain="www.vertexrobotics.example"),
        ]
    )
    assert kinds(batch) == ["company_same_domain"]


def test_company_same_name_on_a_shared_free_mail_domain_is_reported_by_name():
    batch = make_batch(
        companies=[
            company("co_1", name="Kim Consulting", domain="gmail.com"),
            company("co_2", name="Kim Consulting", domain="gmail.com"),
        ]
    )
    assert kinds(batch) == ["company_same_name"]


def test_companies_sharing_only_a_word_are_not_flagged():
    batch = make_batch(
        companies=[
            company("co_1", name="Vertex Robotics", domain="vertexrobotics.example"),
            company("co_2", name="Vertex Foods", domain="vertexfoods.example"),
        ]
    )
    assert findings_of(batch) == []


# --- contact_same_email ----------------------------------------------------------------


def test_contact_same_email():
    batch = make_batch(
        companies=[company("co_1"), company("co_2")],
        contacts=[
            contact("ct_2", email=" Dana@VertexRobotics.example", company_id="co_1"),
            contact("ct_1", email="dana@vertexrobotics.example", company_id="co_2"),
            contact("ct_3", email="lee@vertexrobotics.example", company_id="co_1"),
        ],
        deals=[deal("dl_1", company_id="co_1", contact_ids=["ct_2"], amount=1000)],
    )
    [finding] = findings_of(batch)
    assert finding.kind == "contact_same_email"
    assert finding.severity == "warning"
    assert finding.record_ids == ["ct_1", "ct_2"]
    assert finding.title == "2 contacts share the email dana@vertexrobotics.example"
    assert finding.suggested_fix.startswith("Merge ct_1 into ct_2")
    assert finding.exposure == {"dl_1": Decimal(1000)}


def test_same_name_and_same_email_is_only_contact_same_email():
    batch = make_batch(
        companies=[company("co_1")],
        contacts=[
            contact(
                "ct_1",
                first_name="Dana",
                last_name="Kim",
                email="dana@x.example",
                company_id="co_1",
            ),
            contact(
                "ct_2",
                first_name="Dana",
                last_name="Kim",
                email="DANA@x.example",
                company_id="co_1",
            ),
        ],
    )
    assert kinds(batch) == ["contact_same_email"]


# --- contact_same_person ---------------------------------------------------------------


def test_contact_same_person_exact_name_different_emails():
    batch = make_batch(
        companies=[company("co_1", name="Vertex Robotics")],
        contacts=[
            contact(
                "ct_1",
                first_name="Dana",
                last_name="Kim",
                email="dana@x.example",
                company_id="co_1",
            ),
            contact(
                "ct_2",
                first_name="dana",
                last_name="KIM ",
                email="dkim@x.example",
                company_id="co_1",
            ),
            contact(
                "ct_3", first_name="Lee", last_name="Park", email="lee@x.example", company_id="co_1"
            ),
        ],
    )
    [finding] = findings_of(batch)
    assert finding.kind == "contact_same_person"
    assert finding.severity == "warning"
    assert finding.record_ids == ["ct_1", "ct_2"]
    assert finding.confidence == 1.0
    assert "Vertex Robotics (co_1)" in finding.title


def test_contact_same_person_missing_email_counts_as_different():
    batch = make_batch(
        companies=[company("co_1")],
        contacts=[
            contact(
                "ct_1",
                first_name="Dana",
                last_name="Kim",
                email="dana@x.example",
                company_id="co_1",
            ),
            contact("ct_2", first_name="Dana", last_name="Kim", company_id="co_1"),
        ],
    )
    assert kinds(batch) == ["contact_same_person"]


def test_contact_same_person_fuzzy_match_and_word_order():
    batch = make_batch(
        companies=[company("co_1")],
        contacts=[
            contact(
                "ct_1",
                first_name="Catherine",
                last_name="Lee",
                email="c@x.example",
                company_id="co_1",
            ),
            contact(
                "ct_2",
                first_name="Lee",
                last_name="Katherine",
                email="k@x.example",
                company_id="co_1",
            ),
        ],
    )
    [finding] = findings_of(batch)
    assert finding.kind == "contact_same_person"
    assert finding.record_ids == ["ct_1", "ct_2"]
    assert 0.92 <= finding.confidence < 1.0


def test_contact_names_below_the_fuzzy_threshold_are_not_flagged():
    batch = make_batch(
        companies=[company("co_1")],
        contacts=[
            contact(
                "ct_1",
                first_name="Jon",
                last_name="Smith",
                email="jon@x.example",
                company_id="co_1",
            ),
            contact(
                "ct_2",
                first_name="Jan",
                last_name="Smith",
                email="jan@x.example",
                company_id="co_1",
            ),
        ],
    )
    assert findings_of(batch) == []


def test_same_person_name_at_different_companies_is_not_flagged():
    batch = make_batch(
        companies=[company("co_1"), company("co_2")],
        contacts=[
            contact(
                "ct_1",
                first_name="Dana",
                last_name="Kim",
                email="dana@a.example",
                company_id="co_1",
            ),
            contact(
                "ct_2",
                first_name="Dana",
                last_name="Kim",
                email="dana@b.example",
                company_id="co_2",
            ),
        ],
    )
    assert findings_of(batch) == []


def test_contacts_without_a_company_are_not_compared():
    batch = make_batch(
        contacts=[
            contact("ct_1", first_name="Dana", last_name="Kim", email="dana@a.example"),
            contact("ct_2", first_name="Dana", last_name="Kim", email="dana@b.example"),
        ],
    )
    assert findings_of(batch) == []


def test_contact_same_person_found_in_a_block_larger_than_the_window():
    people = [
        contact(
            f"ct_{i}",
            first_name=f"Person{i:04d}",
            last_name="Zed",
            email=f"p{i}@x.example",
            company_id="co_1",
        )
        for i in range(RULES.fuzzy_window * 4)
    ]
    twin = contact(
        "ct_twin",
        first_name="Person0100",
        last_name="Zed",
        email="twin@x.example",
        company_id="co_1",
    )
    batch = make_batch(companies=[company("co_1")], contacts=[*people, twin])
    same_person = findings_of(batch, "contact_same_person")
    assert [f.record_ids for f in same_person if f.confidence == 1.0] == [["ct_100", "ct_twin"]]


# --- deal_entered_twice ------------------------------------------------------------------


def _twin_deals(first: dict, second: dict, company_ids=("co_1", "co_1")):
    base = {
        "name": "Vertex — cell automation",
        "amount": 100000,
        "stage": "contractsent",
        "close_date": day("2026-07-31"),
    }
    return make_batch(
        companies=[company("co_1", name="Vertex Robotics"), company("co_2", name="Acme")],
        deals=[
            deal("dl_1", company_id=company_ids[0], **{**base, **first}),
            deal("dl_2", company_id=company_ids[1], **{**base, **second}),
        ],
    )


def test_deal_entered_twice_is_critical_and_exposes_only_the_copy():
    batch = _twin_deals({}, {"name": "vertex: cell-automation", "amount": 100500})
    [finding] = findings_of(batch)
    assert finding.kind == "deal_entered_twice"
    assert finding.severity == "critical"
    assert finding.record_ids == ["dl_1", "dl_2"]
    assert finding.confidence == 1.0
    assert finding.suggested_fix.startswith("Keep dl_1 and delete dl_2")
    assert finding.exposure == {"dl_2": Decimal(100500)}


def test_deal_entered_twice_keeps_the_won_copy():
    batch = _twin_deals({}, {"stage": "closedwon"})
    [finding] = findings_of(batch)
    assert finding.suggested_fix.startswith("Keep dl_2 and delete dl_1")
    assert finding.exposure == {"dl_1": Decimal(100000)}


def test_deal_entered_three_times_is_one_finding():
    base = {
        "company_id": "co_1",
        "name": "Renewal 2026",
        "amount": 5000,
        "close_date": day("2026-09-01"),
    }
    batch = make_batch(
        companies=[company("co_1")],
        deals=[
            deal("dl_1", **base),
            deal("dl_2", **base),
            deal("dl_3", **base),
            deal("dl_4", **{**base, "amount": 9000}),
        ],
    )
    [finding] = findings_of(batch)
    assert finding.record_ids == ["dl_1", "dl_2", "dl_3"]
    assert finding.exposure == {"dl_2": Decimal(5000), "dl_3": Decimal(5000)}


def test_deal_entered_twice_near_equal_name_is_fuzzy():
    batch = _twin_deals({"name": "Vertex cell automation"}, {"name": "Vertex cell automaton"})
    [finding] = findings_of(batch)
    assert finding.kind == "deal_entered_twice"
    assert 0.9 <= finding.confidence < 1.0


@pytest.mark.parametrize(("amount", "flagged"), [(101000, True), (101500, False)])
def test_deal_amount_tolerance_edge(amount, flagged):
    batch = _twin_deals({"amount": 100000}, {"amount": amount})
    assert kinds(batch) == (["deal_entered_twice"] if flagged else [])


@pytest.mark.parametrize(("close", "flagged"), [("2026-08-31", True), ("2026-09-01", False)])
def test_deal_close_date_window_edge(close, flagged):
    batch = _twin_deals({"close_date": day("2026-07-31")}, {"close_date": day(close)})
    assert kinds(batch) == (["deal_entered_twice"] if flagged else [])


@pytest.mark.parametrize(
    ("first", "second", "flagged"),
    [
        ({"amount": None}, {"amount": None}, True),
        ({"amount": None}, {}, False),
        ({"close_date": None}, {"close_date": None}, True),
        ({"close_date": None}, {}, False),
    ],
)
def test_deal_missing_amount_or_date_matches_only_missing(first, second, flagged):
    batch = _twin_deals(first, second)
    assert kinds(batch) == (["deal_entered_twice"] if flagged else [])


@pytest.mark.parametrize(
    ("first", "second"),
    [("Vertex — Phase 1", "Vertex — Phase 2"), ("Renewal 2025", "Renewal 2026")],
)
def test_deal_names_differing_in_a_number_are_different_deals(first, second):
    batch = _twin_deals({"name": first}, {"name": second})
    assert findings_of(batch) == []


def test_closed_lost_deal_is_not_a_duplicate():
    batch = _twin_deals({}, {"stage": "Closed Lost"})
    assert findings_of(batch) == []


def test_same_deal_name_at_different_companies_is_not_flagged():
    batch = _twin_deals({}, {}, company_ids=("co_1", "co_2"))
    assert findings_of(batch) == []


# A name that cleans to nothing: missing, blank, punctuation, NUL (as the ingest keeps it,
# escaped) or a lone surrogate's escape. All of them are one name, "no name".
UNNAMED = [None, "", "   ", "\x00\x00", "\\u0000\\u0000", "— / —", "\\udc80"]


@pytest.mark.parametrize("second", UNNAMED)
@pytest.mark.parametrize("first", ["\\u0000\\u0000", None, " "])
def test_unnamed_copies_of_a_deal_are_entered_twice(first, second):
    batch = _twin_deals({"name": first}, {"name": second, "amount": 100500})
    [finding] = findings_of(batch)
    assert (finding.kind, finding.record_ids) == ("deal_entered_twice", ["dl_1", "dl_2"])
    assert finding.confidence == 1.0  # the same "no name": an exact match
    assert finding.exposure == {"dl_2": Decimal(100500)}


@pytest.mark.parametrize(
    "second",
    [
        {"amount": 200000},  # beyond the amount tolerance
        {"close_date": day("2026-12-31")},  # beyond the close date window
        {"amount": None},  # an amount on one copy only
        {"name": "Vertex — cell automation"},  # a named deal is not an unnamed one
        {"name": "a"},
    ],
)
def test_unnamed_deals_differing_in_amount_date_or_name_are_not_duplicates(second):
    batch = _twin_deals({"name": "\\u0000\\u0000"}, {"name": "", **second})
    assert findings_of(batch) == []


def test_unnamed_deals_at_different_companies_are_not_duplicates():
    batch = _twin_deals({"name": None}, {"name": None}, company_ids=("co_1", "co_2"))
    assert findings_of(batch) == []


def test_unnamed_copies_among_named_deals_at_one_company():
    base = {"company_id": "co_1", "amount": 5000, "close_date": day("2026-09-01")}
    batch = make_batch(
        companies=[company("co_1")],
        deals=[
            deal("dl_1", name="Renewal 2026", **base),
            deal("dl_2", name=None, **base),
            deal("dl_3", name="Expansion", **base),
            deal("dl_4", name="\\u0000", **base),
            deal("dl_5", name=None, **{**base, "amount": 9000}),
        ],
    )
    [finding] = findings_of(batch)
    assert finding.record_ids == ["dl_2", "dl_4"]
    assert "(no name) $5,000" in finding.detail


# --- invalid values and near misses ----------------------------------------------------------


def test_invalid_values_of_dedup_fields_are_warnings():
    batch = make_batch(
        companies=[company("co_1")],
        value_problems=[
            ValueProblem("dedup", "co_1", "companies[0].domain", 'not a domain: "http://"'),
            ValueProblem("pipeline", "dl_1", "deals[0].amount", 'not a number: "41O000"'),
        ],
    )
    [finding] = findings_of(batch)
    assert (finding.kind, finding.severity, finding.record_ids) == (
        "invalid_value",
        "warning",
        ["co_1"],
    )


def test_near_misses_lists_pairs_just_under_the_thresholds():
    batch = make_batch(
        companies=[
            company("co_1", name="Vertex Robotics", domain="vertexrobotics.example"),
            company("co_2", name="Vertex Robotic", domain="vertex-robotic.example"),
            company("co_3", name="Vertex Foods", domain="vertexfoods.example"),
        ],
        contacts=[
            contact(
                "ct_1", first_name="Dana", last_name="Kim", email="d@x.example", company_id="co_1"
            ),
            contact(
                "ct_2", first_name="Dana", last_name="Kym", email="k@x.example", company_id="co_1"
            ),
        ],
    )
    assert findings_of(batch) == []
    misses = dedup.near_misses(batch, RULES, limit=10)
    assert [(m["kind"], m["record_ids"]) for m in misses] == [
        ("company_same_name", ["co_1", "co_2"]),
        ("contact_same_person", ["ct_1", "ct_2"]),
    ]
    assert misses[1]["company_id"] == "co_1"
    assert [m["record_ids"] for m in dedup.near_misses(batch, RULES, limit=1)] == [["co_1", "co_2"]]
    assert dedup.near_misses(batch, RULES, limit=0) == []
