"""attribution specialist: one test per rule in docs/rules.md and per "must not flag" case."""

from __future__ import annotations

from decimal import Decimal

from reviews.engine.batch import ValueProblem
from reviews.engine.rules import Rules
from reviews.engine.specialists import attribution
from tests.engine.specialists.factories import company, contact, day, deal, make_batch

RULES = Rules()  # the engine's defaults: no Django settings


def detect(companies=(), contacts=(), deals=(), **kwargs):
    batch = make_batch(list(companies), list(contacts), list(deals), **kwargs)
    return attribution.detect(batch, RULES)


def kinds(findings) -> list[tuple[str, str, list[str]]]:
    return sorted((f.kind, str(f.severity), f.record_ids) for f in findings)


ACME = company("co_1", name="Acme", domain="acme.example")
VERTEX = company("co_2", name="Vertex Robotics", domain="https://www.Vertex.example/")


def test_contact_with_another_companys_domain_is_wrong_company():
    findings = detect(
        [ACME, VERTEX], [contact("ct_1", email=" Dana@VERTEX.example ", company_id="co_1")]
    )

    assert kinds(findings) == [("contact_wrong_company", "warning", ["co_1", "co_2", "ct_1"])]
    assert "vertex.example" in findings[0].detail
    assert "co_2 (Vertex Robotics)" in findings[0].detail
    assert findings[0].confidence == 1.0


def test_wrong_company_exposure_is_the_contacts_open_deals():
    findings = detect(
        [ACME, VERTEX],
        [contact("ct_1", email="dana@vertex.example", company_id="co_1")],
        [
            deal("dl_1", company_id="co_1", contact_ids=["ct_1"], stage="contractsent", amount=7),
            deal("dl_2", company_id="co_1", contact_ids=["ct_1"], stage="closedwon", amount=9),
        ],
    )

    assert findings[0].exposure == {"dl_1": Decimal(7)}


def test_free_mail_contact_at_a_company_is_not_flagged():
    webmail = company("co_3", name="Webmail sole trader", domain="gmail.com")

    assert detect([ACME, webmail], [contact(email="dana@gmail.com", company_id="co_1")]) == []


def test_contact_at_one_of_several_companies_sharing_the_domain_is_not_flagged():
    twin = company("co_3", name="Acme Europe", domain="acme.example")

    assert detect([ACME, twin], [contact(email="dana@acme.example", company_id="co_3")]) == []


def test_subsidiary_domain_is_left_to_near_misses():
    parent = company("co_3", name="Acme Group", domain="group.acme.example")
    batch = make_batch(
        [ACME, parent], [contact("ct_1", email="dana@acme.example", company_id="co_3")]
    )

    assert attribution.detect(batch, RULES) == []
    near = attribution.near_misses(batch, RULES, limit=5)
    assert [(n["relation"], n["record_ids"]) for n in near] == [("subsidiary", ["co_1", "ct_1"])]


def test_contact_without_company_matching_a_domain_is_a_suggestion():
    findings = detect([ACME], [contact("ct_1", email="dana@acme.example", company_id=None)])

    assert kinds(findings) == [("contact_missing_company", "suggestion", ["co_1", "ct_1"])]


def test_contact_with_missing_company_is_a_dangling_reference():
    findings = detect([ACME], [contact("ct_1", email="dana@acme.example", company_id="co_9")])

    assert kinds(findings) == [("dangling_reference", "warning", ["ct_1"])]
    assert "companyId" in findings[0].title
    assert "'co_9'" in findings[0].detail


def test_deal_with_missing_company_and_contacts_is_one_dangling_reference():
    findings = detect(
        [ACME],
        [contact("ct_1", email="dana@acme.example", company_id="co_1")],
        [deal("dl_1", company_id="co_9", contact_ids=["ct_1", "ct_8", "ct_7", "ct_8"])],
    )

    assert kinds(findings) == [("dangling_reference", "warning", ["dl_1"])]
    assert "companyId, contactIds" in findings[0].title
    detail = findings[0].detail
    assert "companyId 'co_9'" in detail
    assert "contactIds 'ct_8'; contactIds 'ct_7'" in detail
    assert detail.count("ct_8") == 1


def test_deal_at_a_missing_company_is_not_also_contact_elsewhere():
    findings = detect(
        [ACME],
        [contact("ct_1", email="ann@acme.example", company_id="co_1")],
        [deal("dl_1", company_id="co_9", contact_ids=["ct_1"])],
    )

    assert kinds(findings) == [("dangling_reference", "warning", ["dl_1"])]


def test_dangling_deal_exposure_is_its_own_open_amount():
    open_deal = deal("dl_1", company_id="co_9", stage="qualifiedtobuy", amount=1200)
    lost_deal = deal("dl_2", company_id="co_9", stage="closedlost", amount=1200)

    findings = detect([ACME], [], [open_deal, lost_deal])

    assert {f.record_ids[0]: f.exposure for f in findings} == {
        "dl_1": {"dl_1": Decimal(1200)},
        "dl_2": {},
    }


def test_deal_listing_a_contact_of_another_company_is_flagged():
    findings = detect(
        [ACME, VERTEX],
        [
            contact("ct_1", email="ann@acme.example", company_id="co_1"),
            contact("ct_2", email="bob@vertex.example", company_id="co_2"),
        ],
        [deal("dl_1", company_id="co_1", contact_ids=["ct_1", "ct_2"], stage="contractsent")],
    )

    assert kinds(findings) == [
        ("deal_contact_elsewhere", "warning", ["co_1", "co_2", "ct_2", "dl_1"])
    ]
    assert "ct_2 (at co_2)" in findings[0].detail


def test_deal_contacts_without_a_company_on_either_side_are_not_flagged():
    findings = detect(
        [ACME],
        [
            contact("ct_1", email="ann@gmail.com", company_id=None),
            contact("ct_2", email="bob@acme.example", company_id="co_1"),
        ],
        [
            deal("dl_1", company_id="co_1", contact_ids=["ct_1"]),
            deal("dl_2", company_id=None, contact_ids=["ct_2"]),
        ],
    )

    assert findings == []


def test_clean_batch_has_no_findings():
    findings = detect(
        [ACME, VERTEX],
        [
            contact("ct_1", email="ann@acme.example", company_id="co_1"),
            contact("ct_2", email="bob@vertex.example", company_id="co_2"),
            contact("ct_3", email="cy@yahoo.co.uk", company_id="co_2"),
        ],
        [
            deal(
                "dl_1",
                company_id="co_2",
                contact_ids=["ct_2", "ct_3"],
                close_date=day("2026-09-01"),
            )
        ],
    )

    assert findings == []


def test_invalid_email_becomes_an_attribution_invalid_value():
    problem = ValueProblem("attribution", "ct_1", "contacts[0].email", 'not an email: "dana"')

    findings = detect([], [contact("ct_1", email=None)], value_problems=[problem])

    assert kinds(findings) == [("invalid_value", "warning", ["ct_1"])]


def test_near_misses_lists_subdomains_and_near_spellings():
    vertex = company("co_2", name="Vertex Robotics", domain="vertexrobotics.example")
    batch = make_batch(
        [ACME, vertex],
        [
            contact("ct_1", email="a@eu.acme.example", company_id="co_2"),
            contact("ct_2", email="b@vertexrobotiics.example", company_id="co_1"),
            contact("ct_3", email="c@vertex-robotics.example", company_id=None),
            contact("ct_4", email="d@eu.acme.example", company_id="co_1"),
            contact("ct_5", email="e@unrelated.example", company_id="co_1"),
        ],
    )

    near = attribution.near_misses(batch, RULES, limit=10)

    assert [(n["relation"], n["record_ids"]) for n in near] == [
        ("subdomain", ["co_1", "ct_1"]),
        ("near-spelling", ["co_2", "ct_2"]),
        ("near-spelling", ["co_2", "ct_3"]),
    ]
    assert len(attribution.near_misses(batch, RULES, limit=2)) == 2


def test_near_misses_pass_over_free_mail_domains():
    # gmail.com is the company's domain with a stray letter, and free mail: no near miss.
    gmal = company("co_2", name="Gmal Ltd", domain="gmal.com")
    batch = make_batch(
        [ACME, gmal],
        [
            contact("ct_1", email="a@gmail.com", company_id="co_1"),
            contact("ct_2", email="b@gmaal.com", company_id="co_1"),
        ],
    )

    near = attribution.near_misses(batch, RULES, limit=10)

    assert [(n["relation"], n["record_ids"]) for n in near] == [("near-spelling", ["co_2", "ct_2"])]


def test_slice_names_the_fields_read():
    assert attribution.SLICE["contacts"] == ("id", "email", "company_id")
    assert "domain" in attribution.SLICE["companies"]


# --- the rules as queries over the columns: where SQL's NULLs and joins could differ
# from Python's dict lookups (reviews/engine/tables/columns.py) ------------------------


def test_a_company_id_given_twice_has_its_last_records_domain():
    # A lookup by id keeps the last record of that id: the contact's own domain is
    # vertex.example, so its vertex.example email is at home, not elsewhere.
    first = company("co_1", name="Acme", domain="acme.example")
    last = company("co_1", name="Acme (Vertex)", domain="vertex.example")
    other = company("co_3", name="Vertex Robotics", domain="vertex.example")
    at_home = contact("ct_1", email="dana@vertex.example", company_id="co_1")

    assert kinds(detect([first, last, other], [at_home])) == []
    assert kinds(detect([last, first, other], [at_home])) == [
        ("contact_wrong_company", "warning", ["co_1", "co_3", "ct_1"])
    ]


def test_a_contact_id_given_twice_is_at_its_last_records_company():
    # As for companies: the deal's contact ct_1 is at co_2 by its last record.
    deal_at_acme = deal("dl_1", company_id="co_1", contact_ids=["ct_1"], stage="qualifiedtobuy")
    at_acme = contact("ct_1", email="dana@acme.example", company_id="co_1")
    at_vertex = contact("ct_1", email="dana@vertex.example", company_id="co_2")

    assert kinds(detect([ACME, VERTEX], [at_vertex, at_acme], [deal_at_acme])) == []
    assert kinds(detect([ACME, VERTEX], [at_acme, at_vertex], [deal_at_acme])) == [
        ("deal_contact_elsewhere", "warning", ["co_1", "co_2", "ct_1", "dl_1"])
    ]


def test_blank_ids_are_no_company_and_name_nothing_missing():
    findings = detect(
        [ACME],
        [
            contact("ct_1", email="dana@acme.example", company_id=""),
            contact("ct_2", email="lee@acme.example", company_id=None, company_ids=["co_1"]),
        ],
        [deal("dl_1", company_id="", contact_ids=["ct_1", "ct_1"], stage="qualifiedtobuy")],
    )

    assert kinds(findings) == [
        ("contact_missing_company", "suggestion", ["co_1", "ct_1"]),
        ("contact_missing_company", "suggestion", ["co_1", "ct_2"]),
    ]


def test_a_contact_both_dangling_and_elsewhere_is_only_dangling_and_findings_keep_order():
    findings = detect(
        [ACME, VERTEX],
        [
            contact("ct_2", email="kim@vertex.example", company_id="co_1", company_ids=["co_9"]),
            contact("ct_1", email="dana@vertex.example", company_id="co_1"),
        ],
    )

    assert [(f.kind, f.record_ids[-1]) for f in findings] == [
        ("dangling_reference", "ct_2"),
        ("contact_wrong_company", "ct_1"),
    ]


def test_without_companies_every_company_id_is_missing_but_a_partial_export_says_nothing():
    people = [contact("ct_1", email="dana@acme.example", company_id="co_1")]

    assert kinds(detect([], people)) == [("dangling_reference", "warning", ["ct_1"])]
    assert kinds(detect([], people, partial=["companies"])) == []
