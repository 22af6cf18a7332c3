"""The fix plan on plain data (reviews.engine.fixes.fixplan, survivor): the survivor an
analyst picks for every duplicate finding, with its reason; tasks with owners and
HubSpot properties, sorted by money. No database."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from reviews.engine.findings import Severity
from reviews.engine.fixes import fixplan, survivor
from reviews.engine.fixes.links import RecordLinks
from reviews.engine.specialists.dedup import MERGE_KINDS
from tests.engine.fixplan_helpers import findings, parsed, plan_of, sample
from tests.engine.ingest.hubspot_exports import BATCH, api_files, csv_files, native_file
from tests.engine.specialists.factories import company, contact, deal, make_batch

# --- the survivor rule -------------------------------------------------------------------


def test_a_won_deal_survives_an_open_copy_whatever_its_id():
    batch = make_batch(deals=[deal("dl_1", stage="contractsent"), deal("dl_2", stage="closedwon")])
    choice = survivor.choose(batch.deals, batch)
    assert choice.survivor.id == "dl_2"
    assert choice.reason == "dl_2 is closed won (dl_1 not)"


def test_the_company_with_most_associations_survives():
    batch = make_batch(
        companies=[company("co_1"), company("co_2")],
        contacts=[contact("ct_1", company_id="co_2"), contact("ct_2", company_ids=["co_2"])],
        deals=[deal("dl_1", company_id="co_1"), deal("dl_2", company_id="co_2")],
    )
    choice = survivor.choose(batch.companies, batch)
    assert choice.survivor.id == "co_2"
    assert choice.reason == "co_2 has the most associations (3; co_1 1)"


def test_the_oldest_by_created_date_then_by_last_modified():
    created = make_batch(
        contacts=[
            contact("ct_1", extra={"createdate": "2025-03-01T10:00:00Z"}),
            contact("ct_2", extra={"Create Date": "2024-01-15 09:00"}),
        ]
    )
    choice = survivor.choose(created.contacts, created)
    assert choice.survivor.id == "ct_2"
    assert "ct_2 is the oldest (created 2024-01-15; ct_1 2025-03-01)" in choice.reason
    assert choice.reason.startswith("tied on associations (0 each)")
    modified = make_batch(
        companies=[
            company("co_1", updated_at=datetime(2026, 7, 1, tzinfo=UTC)),
            company("co_2", updated_at=datetime(2025, 7, 1, tzinfo=UTC)),
        ]
    )
    assert survivor.choose(modified.companies, modified).survivor.id == "co_2"
    assert "last modified 2025-07-01" in survivor.choose(modified.companies, modified).reason


def test_the_oldest_by_a_created_date_the_native_json_keeps_as_text():
    doc = {
        "companies": [],
        "deals": [],
        "contacts": [
            {"id": "ct_1", "email": "a@x.example", "createdate": "2025-03-01T10:00:00Z"},
            {"id": "ct_2", "email": "b@x.example", "createdate": "2024-01-15T09:00:00Z"},
        ],
    }
    batch = parsed([("batch.json", json.dumps(doc).encode())])
    assert batch.contacts[0].extra == {}  # kept by the batch, read through Batch.extra_of
    choice = survivor.choose(batch.contacts, batch)
    assert choice.survivor.id == "ct_2"
    assert "ct_2 is the oldest (created 2024-01-15; ct_1 2025-03-01)" in choice.reason


def test_a_missing_date_does_not_make_a_record_the_oldest():
    batch = make_batch(
        contacts=[contact("ct_9", extra={"createdate": "2020-01-01"}), contact("ct_10")]
    )
    choice = survivor.choose(batch.contacts, batch)
    assert "no dates to tell the oldest" in choice.reason
    # Not HubSpot's numeric ids: compared as text, so "ct_10" sorts before "ct_9".
    assert choice.survivor.id == "ct_10"


def test_hubspot_ids_compare_as_numbers():
    batch = make_batch(companies=[company("10"), company("9"), company("100")])
    choice = survivor.choose(batch.companies, batch)
    assert choice.survivor.id == "9"
    assert choice.reason.endswith("9 has the lowest id")


def test_ids_are_ordered_as_text_never_through_int():
    huge = "9" * 5000  # past Python's 4,300-digit limit for int()
    ids = [huge, "10", "007", "7", "8" + "0" * 4999, "co_1", "\u00b2"]  # "²" is a digit too
    assert sorted(ids, key=survivor.id_key) == ["007", "7", "10", "8" + "0" * 4999, huge,
                                                "co_1", "\u00b2"]  # fmt: skip
    batch = make_batch(deals=[deal(huge), deal("5001")])
    choice = survivor.choose(batch.deals, batch, ("lowest_id",))
    assert (choice.survivor.id, choice.reason) == ("5001", "5001 has the lowest id")


def test_the_order_is_configurable_and_checked():
    batch = make_batch(
        companies=[company("co_1"), company("co_2")],
        contacts=[contact("ct_1", company_id="co_2")],
    )
    assert survivor.choose(batch.companies, batch, ("lowest_id",)).survivor.id == "co_1"
    assert survivor.parse_order(" lowest_id, won ") == ("lowest_id", "won")
    with pytest.raises(ValueError, match="unknown survivor criteria newest"):
        survivor.parse_order("won,newest")


# --- merges on the samples and on realistic exports ----------------------------------------


def merges_by_kind(plan: fixplan.FixPlan) -> dict[str, fixplan.Merge]:
    return {m.kind: m for m in plan.merges}


def test_full_sample_every_duplicate_finding_has_its_survivor_and_reason():
    batch = sample("full.json")
    found = findings(batch)
    duplicates = [f for f in found if f.category == "dedup" and f.kind in MERGE_KINDS]
    plan = fixplan.build(batch, found)
    assert [m.fingerprint for m in plan.merges] == [f.fingerprint for f in duplicates]
    merges = merges_by_kind(plan)
    # co_201 carries Dana's contact and both Vertex deals; co_202 only the copied contact.
    company = merges["company_same_domain"]
    assert (company.object, company.primary, company.merge) == ("companies", "co_201", ["co_202"])
    assert company.reason == "co_201 has the most associations (4; co_202 1)"
    assert company.moves == [{"from": "co_202", "contacts": ["ct_202"]}]
    assert {"record_id": "co_202", "property": "name", "value": "Vertex Robotics LLC",
            "kept": "Vertex Robotics"} in company.loses  # fmt: skip
    # A field no rule reads, kept by the batch as text (extra_fields.py), still compared.
    assert {"record_id": "co_202", "property": "numberOfEmployees", "value": "250",
            "kept": "240"} in company.loses  # fmt: skip
    person = merges["contact_same_email"]
    assert (person.primary, person.merge) == ("ct_201", ["ct_202"])
    twice = merges["deal_entered_twice"]
    assert (twice.object, twice.primary, twice.merge) == ("deals", "dl_201", ["dl_202"])
    assert twice.reason == (
        "none closed won; tied on associations (2 each); no dates to tell the oldest; "
        "dl_201 has the lowest id"
    )
    assert {loss["property"] for loss in twice.loses} == {"dealname", "amount", "closedate"}


def test_the_suggested_fix_names_the_plans_survivor():
    batch = sample("full.json")
    found = {f.fingerprint: f for f in findings(batch)}
    for merge in fixplan.build(batch, list(found.values())).merges:
        fix = found[merge.fingerprint].suggested_fix
        assert f"into {merge.primary}" in fix or f"Keep {merge.primary} " in fix, fix


@pytest.mark.parametrize(
    "files",
    [
        native_file(),
        csv_files(),
        csv_files(style="excel_us"),
        csv_files(style="excel_de", language="de"),
        api_files(),
        api_files(combined=True),
    ],
    ids=["native", "hubspot-csv", "excel-us", "excel-de", "api", "api-combined"],
)
def test_realistic_exports_give_the_survivors_an_analyst_picks(files):
    plan = plan_of(parsed(files))
    merges = {(m.object, m.primary, tuple(m.merge)) for m in plan.merges}
    assert merges == {
        ("companies", "9001", ("9002",)),  # Dana, her copy and both deals are at 9001
        ("contacts", "7001", ("7004",)),  # 7001 is on the deals; 7004 on none
        ("deals", "5001", ("5002",)),  # two identical open copies: the lower id
    }
    tasks = {(t.object, t.record_id, t.kind): t.property for t in plan.tasks}
    assert tasks == {
        ("deals", "5004", "negative_amount"): "amount",
        ("deals", "5004", "open_past_close_date"): "closedate",
        ("deals", "5005", "won_without_amount"): "amount",
        ("contacts", "7002", "contact_wrong_company"): "associatedcompanyid",
        ("contacts", "7005", "dangling_reference"): "associatedcompanyid",
        ("deals", "5003", "deal_contact_elsewhere"): "associations.contacts",
        ("companies", "9003", "stale_enrichment"): "",
    }


def test_hubspot_csv_sample_links_tasks_to_the_portal():
    batch = sample("hubspot/companies.csv", "hubspot/contacts.csv", "hubspot/deals.csv")
    plan = plan_of(batch, links=RecordLinks(account="4512345"))
    [merge] = plan.merges
    assert (merge.primary, merge.merge) == ("9001001", ["9001002"])
    won = next(t for t in plan.tasks if t.kind == "won_without_amount")
    assert (won.object, won.record_id, won.property) == ("deals", "5001002", "amount")
    assert won.url == "https://app.hubspot.com/contacts/4512345/record/0-3/5001002"
    contact_task = next(t for t in plan.tasks if t.object == "contacts")
    assert contact_task.url.startswith("https://app.hubspot.com/contacts/4512345/record/0-1/")


SALESFORCE_EXPORT = tuple(
    f"salesforce/{name}.csv"
    for name in ("Account", "Contact", "Lead", "Opportunity", "OpportunityContactRole", "User")
)


def test_salesforce_sample_links_tasks_to_the_org():
    batch = sample(*SALESFORCE_EXPORT)
    org = RecordLinks("salesforce", "https://acme.my.salesforce.com/")
    plan = plan_of(batch, links=org)
    urls = {(t.object, t.record_id): t.url for t in plan.tasks}
    assert urls and all(urls.values())
    for (object_type, record_id), url in urls.items():
        sf_object = {"companies": "Account", "contacts": "Contact", "deals": "Opportunity"}
        sf_object["leads"] = "Lead"
        expected = f"https://acme.my.salesforce.com/lightning/r/{sf_object[object_type]}"
        assert url == f"{expected}/{record_id}/view"
    # no org named: no link; an id Salesforce would not have given: no link
    assert not any(t.url for t in plan_of(batch, links=RecordLinks("salesforce")).tasks)
    assert org.url("deals", "5001002") == ""
    assert org.url("deals", "0065g0000AbC001") != ""  # the 15-character form
    assert org.where == "Salesforce org acme.my.salesforce.com"
    with_path = RecordLinks("salesforce", "https://acme.my.salesforce.com/home?x=1")
    assert with_path.url("deals", "0065g0000AbC001") == (
        "https://acme.my.salesforce.com/lightning/r/Opportunity/0065g0000AbC001/view"
    )
    assert RecordLinks("salesforce", "acme.my.salesforce.com").url("deals", "0065g0000AbC001") == ""
    assert all(t.url == "" for t in plan_of(batch).tasks)  # no portal: no links


# --- tasks ----------------------------------------------------------------------------------


def test_tasks_carry_the_record_owner_else_the_companys_and_come_fix_first():
    batch = make_batch(
        companies=[company("co_1", extra={"owner": "maya@acme.example"})],
        deals=[
            deal("dl_1", company_id="co_1", stage="closedwon", amount=None,
                 close_date=datetime(2026, 6, 1).date()),
            deal("dl_2", company_id="co_1", stage="contractsent", amount=90000,
                 close_date=datetime(2026, 7, 1).date(), extra={"hubspot_owner_id": "owen"}),
            deal("dl_3", company_id="co_1", stage="qualifiedtobuy", amount=200000,
                 close_date=datetime(2026, 5, 1).date()),
        ],
    )  # fmt: skip
    plan = plan_of(batch)
    rows = [(t.record_id, t.owner, t.property, t.amount) for t in plan.tasks]
    # The critical without an amount first, then the warnings by money: never by
    # dollars alone, which put it last.
    assert rows == [
        ("dl_1", "maya@acme.example", "amount", None),
        ("dl_3", "maya@acme.example", "closedate", 200000),
        ("dl_2", "owen", "closedate", 90000),
    ]
    assert plan.tasks[1].problem.startswith('Open deal "Deal dl_3" (dl_3) is')  # named, with its id
    assert plan.tasks[1].currency == "USD"


def test_among_equals_the_older_problem_comes_first():
    batch = make_batch(
        companies=[company("co_1")],
        deals=[deal(f"dl_{n}", company_id="co_1", stage="closedwon", amount=None)
               for n in (1, 2, 3)],
    )  # fmt: skip
    august = datetime(2026, 8, 1, tzinfo=UTC)
    ages = {"dl_1": august, "dl_2": None, "dl_3": august - timedelta(days=30)}
    found = [replace(f, first_seen=ages[f.record_ids[0]]) for f in findings(batch)]
    plan = fixplan.build(batch, found)
    assert [t.record_id for t in plan.tasks if t.kind == "won_without_amount"] == [
        "dl_3",  # open for a month
        "dl_1",
        "dl_2",  # never seen before: new
    ]


def test_invalid_values_name_the_hubspot_property():
    data = {
        "exportedAt": "2026-08-01T09:00:00Z",
        "companies": [{"id": "1", "name": "Acme", "domain": "acme.example"}],
        "contacts": [{"id": "2", "email": "not-an-email", "companyId": "1"}],
        "deals": [{"id": "3", "name": "Acme", "amount": "41O000", "closeDate": "soon",
                   "stage": "appointmentscheduled", "companyId": "1"}],
    }  # fmt: skip
    plan = plan_of(parsed([("b.json", json.dumps(data).encode())], as_of=None))
    invalid = {(t.object, t.record_id, t.property) for t in plan.tasks if t.kind == "invalid_value"}
    # The deal's two bad values are one finding (the coordinator unions them): one task.
    assert invalid == {("contacts", "2", "email"), ("deals", "3", "amount;closedate")}


def test_overlapping_duplicate_findings_never_merge_a_record_twice():
    batch = make_batch(
        companies=[
            company("co_1", name="Vertex", domain="vertex.example"),
            company("co_2", name="Vertex Robotics", domain="vertex.example"),
            company("co_3", name="Vertex Robotics", domain="vertex-robotics.example"),
        ],
        contacts=[contact("ct_1", company_id="co_2"), contact("ct_2", company_id="co_3"),
                  contact("ct_3", company_id="co_3")],
    )  # fmt: skip
    plan = plan_of(batch)
    merged = [i for m in plan.merges for i in m.merge]
    assert sorted(merged) == sorted(set(merged))
    by_kind = merges_by_kind(plan)
    assert (by_kind["company_same_domain"].primary, by_kind["company_same_domain"].merge) == (
        "co_2",
        ["co_1"],
    )
    same_name = by_kind["company_same_name"]
    assert (same_name.primary, same_name.merge) == ("co_3", ["co_2"])
    assert same_name.check.startswith("same name, not the same domain")
    assert by_kind["company_same_domain"].check == ""


def test_dismissed_findings_left_out_by_the_caller_are_not_planned():
    batch = sample("full.json")
    found = findings(batch)
    kept = [f for f in found if f.kind != "deal_entered_twice"]
    plan = fixplan.build(batch, kept)
    assert "deal_entered_twice" not in {m.kind for m in plan.merges}
    assert "deal_entered_twice" not in {t.kind for t in plan.tasks}


def test_plan_json_has_the_documented_keys():
    document = fixplan.plan_json(plan_of(parsed(native_file())))
    assert set(document) == {"merges", "tasks"}
    assert {"object", "primary", "merge", "reason", "fingerprint"} <= set(document["merges"][0])
    assert {"object", "record_id", "owner", "property", "problem", "amount", "currency",
            "url"} <= set(document["tasks"][0])  # fmt: skip
    assert BATCH["id"]  # the realistic batch under test


@pytest.mark.parametrize("seed", [1, 2])
def test_on_a_generated_crm_every_finding_is_planned_once_and_no_record_merged_twice(seed):
    from reviews.samplegen import generate

    data, truth = generate(3000, seed)
    batch = parsed([("generated.json", json.dumps(data).encode())], as_of=None)
    found = findings(batch)
    plan = fixplan.build(batch, found)
    duplicates = [f for f in found if f.kind in MERGE_KINDS and f.category == "dedup"]
    assert len(plan.merges) == len(duplicates)
    assert len(plan.tasks) == len(found) - len(duplicates)
    merged = [(m.object, i) for m in plan.merges for i in m.merge]
    assert len(merged) == len(set(merged))
    for merge in plan.merges:
        assert merge.primary not in merge.merge and merge.reason
    planted = [p for p in truth["planted"] if p["kind"] in MERGE_KINDS]
    for item in planted:  # every planted duplicate group ends in one survivor
        roots = {_final(plan, MERGE_KINDS[item["kind"]], i) for i in item["record_ids"]}
        assert len(roots) == 1, item
    ranks = [(Severity(t.severity).rank, -(t.amount or 0)) for t in plan.tasks]
    assert ranks == sorted(ranks)  # fix first: severity, then money


def _final(plan: fixplan.FixPlan, object_type: str, record_id: str) -> str:
    into = {(m.object, i): m.primary for m in plan.merges for i in m.merge}
    while (object_type, record_id) in into:
        record_id = into[object_type, record_id]
    return record_id


def test_a_task_on_a_record_the_plan_merges_away_names_its_survivor():
    batch = make_batch(
        companies=[company("co_1")],
        contacts=[
            contact("ct_1", email="dana@acme.example", company_id="co_1"),
            contact("ct_2", email="DANA@acme.example", company_id="co_1", first_name="Dana",
                    last_name="Kim"),
        ],
        deals=[deal("dl_1", company_id="co_1", contact_ids=["ct_1"], stage="contractsent")],
    )  # fmt: skip
    found = [*findings(batch), _invalid_email("ct_2")]
    plan = fixplan.build(batch, found)
    [merge] = plan.merges
    assert (merge.primary, merge.merge) == ("ct_1", ["ct_2"])
    [task] = [t for t in plan.tasks if t.record_id == "ct_2"]
    assert task.merged_into == "ct_1"
    assert fixplan.task_json(task)["merged_into"] == "ct_1"


def _invalid_email(record_id: str) -> fixplan.PlanFinding:
    return fixplan.PlanFinding(
        category="attribution",
        kind="invalid_value",
        severity="warning",
        title=f"Invalid email on contact {record_id}: not an email",
        record_ids=[record_id],
        detail="contacts[1].email: not an email",
    )


def test_an_unknown_survivor_criterion_stops_the_start_up():
    import os
    import subprocess
    import sys

    from tests.services import ROOT

    env = {**os.environ, "RULE_MERGE_SURVIVOR_ORDER": "won,newest"}
    started = subprocess.run(
        [sys.executable, "-c", "import revreview.settings"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert started.returncode != 0
    assert "rule merge_survivor_order: unknown survivor criteria newest" in started.stderr


# --- the kinds' declarations -------------------------------------------------------------


def test_a_kind_declared_at_run_time_is_planned_from_its_own_declaration():
    """A team's rule (docs/rules.md) is a Kind the registry does not list: handed to the
    plan with the others, its task is where it says; unknown, on its record as a whole."""
    from reviews.engine.findings import Severity
    from reviews.engine.specialists import KINDS
    from reviews.engine.specialists.spec import FixTarget, Kind

    batch = make_batch(companies=[company("co_1", domain="acme.example")])
    no_vat = Kind(
        "no_vat_number",
        (Severity.WARNING,),
        ("company", "companies", "no VAT number"),
        finds="an EU company without a VAT number",
        fix=FixTarget("companies", "domain"),
    )
    finding = fixplan.PlanFinding("team", "no_vat_number", "warning", "No VAT", ["co_1"])
    (task,) = fixplan.build(batch, [finding], kinds={**KINDS, no_vat.name: no_vat}).tasks
    assert (task.object, task.record_id, task.property) == ("companies", "co_1", "domain")
    (task,) = fixplan.build(batch, [finding]).tasks  # not declared: the record as a whole
    assert (task.object, task.record_id, task.property) == ("companies", "co_1", "")


def test_a_duplicate_filed_under_another_category_is_a_task_not_a_merge():
    """Only the specialist that declares a duplicate kind's merge has it merged: a model
    that re-files the finding (or names a kind of its own alike) gets a task."""
    batch = make_batch(companies=[company("co_1"), company("co_2")])
    found = fixplan.PlanFinding("dedup", "company_same_domain", "warning", "Two", ["co_1", "co_2"])
    assert [m.merge for m in fixplan.build(batch, [found]).merges] == [["co_2"]]
    refiled = fixplan.PlanFinding(
        "attribution", "company_same_domain", "warning", "Two", ["co_1", "co_2"]
    )
    plan = fixplan.build(batch, [refiled])
    assert plan.merges == [] and [(t.record_id, t.property) for t in plan.tasks] == [("co_1", "")]
