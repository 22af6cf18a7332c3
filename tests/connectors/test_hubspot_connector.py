"""HubSpot behind the Connector protocol (connectors/hubspot/connector.py), against the
loopback stand-in: the account check, a full and an incremental pull through a
checkpoint, the pipelines, what it spent of the limits, and the writes it does not offer
yet refused before anything is sent. No Django."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from connectors.base import (
    Account,
    CredentialsRefused,
    MergeRefused,
    WriteRefused,
)
from connectors.hubspot.client import Limits
from connectors.hubspot.connector import HubSpotConnector
from reviews.engine import coverage
from reviews.engine.ingest import UploadedFile, parse_upload
from tests.connectors.portals import CUSTOM_PIPELINE, problem_portal
from tests.connectors.standin import StandIn

TOKEN = "pat-na1-good"
NOW = datetime(2026, 8, 1, tzinfo=UTC)


class MemoryCheckpoint:
    """A checkpoint that keeps its answers in a list: what DbCheckpoint keeps as rows."""

    def __init__(self) -> None:
        self.kept: list[tuple[str, object]] = []
        self.last: dict = {}
        self.flushes = 0

    def chunks(self) -> list[tuple[str, object]]:
        return list(self.kept)

    def progress(self) -> dict:
        return self.last

    def record(self, step: str, data: object, progress: dict) -> None:
        if data is not None:
            self.kept.append((step, data))
        self.last = progress

    def flush(self) -> None:
        self.flushes += 1


def connector(api: StandIn, token: str = TOKEN) -> HubSpotConnector:
    return HubSpotConnector(api.url, token, Limits(share=1.0, backoff_seconds=0.01))


def test_check_names_the_portal_its_currency_and_time_zone():
    with StandIn(problem_portal()) as api, connector(api) as hubspot:
        account = hubspot.check()
    assert account == Account(
        id="4242", currency="EUR", time_zone="Europe/Berlin", details=account.details
    )
    assert account.details["uiDomain"] == "app-eu1.hubspot.com"


def test_a_refused_token_is_credentials_refused_with_hubspots_message():
    with StandIn(problem_portal()) as api, connector(api, "pat-na1-nope") as hubspot:
        with pytest.raises(CredentialsRefused, match="Authentication credentials not found"):
            hubspot.check()


def test_a_full_then_an_incremental_pull_give_the_crm_api_json_document():
    portal = problem_portal(size=4)
    with StandIn(portal) as api, connector(api) as hubspot:
        full = hubspot.pull(MemoryCheckpoint(), previous=None, since=None)
        before = datetime.fromtimestamp(portal.clock_ms / 1000, UTC)  # the portal's clock
        portal.put("companies", "3", {"name": "Northwind Traders GmbH"})
        portal.archive("companies", "2")
        incremental = hubspot.pull(MemoryCheckpoint(), previous=full.document, since=before)
        usage = hubspot.usage()
    companies = {c["id"]: c for c in full.document["companies"]}
    lists = ("companies", "contacts", "deals")
    assert full.records == sum(len(full.document[t]) for t in lists) == full.changed
    assert {"1", "2", "3"} <= set(companies) and full.removed == 0
    assert {p.id for p in full.pipelines} >= {CUSTOM_PIPELINE["id"]}
    assert full.pipelines_problem == ""
    after = {c["id"]: c for c in incremental.document["companies"]}
    assert after["3"]["properties"]["name"] == "Northwind Traders GmbH"
    assert "2" not in after and incremental.removed == 1
    assert incremental.changed < full.changed
    assert usage.requests == portal.requests
    assert usage.left_today == portal.daily - portal.daily_used < portal.daily
    assert usage.waited_seconds >= 0 and usage.in_flight_seconds > 0


def test_a_pull_from_a_portal_without_a_property_is_a_partial_export():
    """The portal returns no dealstage (HubSpot leaves out a property it does not have):
    the document says which properties came back, and its review lacks the deals'
    stage. An incremental pull that fetched no deal keeps what the full one said."""
    portal = problem_portal(size=4)
    portal.lacks["deals"] = {"dealstage"}
    with StandIn(portal) as api, connector(api) as hubspot:
        full = hubspot.pull(MemoryCheckpoint(), previous=None, since=None)
        before = datetime.fromtimestamp(portal.clock_ms / 1000, UTC)
        portal.put("companies", "3", {"name": "Northwind Traders GmbH"})
        incremental = hubspot.pull(MemoryCheckpoint(), previous=full.document, since=before)
        portal.lacks.clear()
        whole = hubspot.pull(MemoryCheckpoint(), previous=None, since=None)

    def lacking(pulled) -> dict:
        data = json.dumps(pulled.document).encode()
        batch = parse_upload([UploadedFile("pull.json", data)], as_of=None, received_at=NOW)
        return {m["field"]: m["switched_off"] for m in coverage.missing_columns(batch)}

    assert "dealstage" not in full.document["properties"]["deals"]
    assert "amount" in full.document["properties"]["deals"]
    assert lacking(full).keys() == {"stage"} and "won_without_amount" in lacking(full)["stage"]
    assert incremental.document["properties"]["deals"] == full.document["properties"]["deals"]
    assert lacking(incremental).keys() == {"stage"}
    assert lacking(whole) == {}


def test_the_pipelines_are_read_as_an_uploaded_response_is():
    with StandIn(problem_portal()) as api, connector(api) as hubspot:
        pipelines = hubspot.pipelines()
    renewals = next(p for p in pipelines if p.id == CUSTOM_PIPELINE["id"])
    assert renewals.label == "Renewals"


def test_a_merge_of_a_record_not_there_is_refused():
    portal = problem_portal()
    with StandIn(portal) as api, connector(api) as hubspot:
        with pytest.raises(MergeRefused, match=r"HubSpot refused the merge \(400\)"):
            hubspot.merge("companies", "1", "999999")
    assert portal.merges == []


def test_a_snapshot_of_an_id_a_merge_replaced_is_the_record_it_became():
    portal = problem_portal()
    new_deal = portal.merge("deals", "21", "24")  # deals merge into a new id
    with StandIn(portal) as api, connector(api) as hubspot:
        taken = hubspot.snapshot("deals", ["21", new_deal])
    assert taken["21"]["properties"]["hs_object_id"] == new_deal
    assert taken["21"]["properties"]["dealname"] == taken[new_deal]["properties"]["dealname"]
    assert taken["21"]["associations"] == taken[new_deal]["associations"]
    assert [link["id"] for link in taken["21"]["associations"]["companies"]] == ["1", "3"]


def test_a_record_is_made_again_without_the_values_hubspot_alone_writes():
    portal = problem_portal()
    with StandIn(portal) as api, connector(api) as hubspot:
        (record,) = hubspot.snapshot("companies", ["2"]).values()
        new_id = hubspot.recreate("companies", record)
        # Told nothing is read-only, HubSpot refuses the create and says which value.
        with pytest.raises(WriteRefused, match=r"\(400\).*hs_object_id.*read only"):
            hubspot.recreate("companies", {**record, "read_only": []})
    assert portal.objects["companies"][new_id]["properties"]["name"] == "Vertex Robotics LLC"
    assert new_id != "2" and len(portal.live("companies")) == 4


def contacts_of(pulled) -> dict[str, dict]:
    return {c["id"]: c for c in pulled.document["contacts"]}


def test_associations_read_after_a_merge_override_the_stale_company_property():
    """Contact 12 named company 2 (associatedcompanyid). Company 2 is merged into 1:
    HubSpot moves the association without modifying the contact, so the incremental
    pull keeps the contact's properties from the last snapshot but reads its
    associations again; those decide its company, not the stale property."""
    portal = problem_portal()
    with StandIn(portal) as api, connector(api) as hubspot:
        full = hubspot.pull(MemoryCheckpoint(), previous=None, since=None)
        before = datetime.fromtimestamp(portal.clock_ms / 1000, UTC)
        portal.merge("companies", "1", "2")
        incremental = hubspot.pull(MemoryCheckpoint(), previous=full.document, since=before)
    assert contacts_of(full)["12"]["properties"]["associatedcompanyid"] == "2"
    twelve = contacts_of(incremental)["12"]
    assert twelve["properties"]["associatedcompanyid"] == "1"
    assert twelve["associations"]["companies"]["results"] == [
        {"id": "1", "type": "contact_to_company"}
    ]
    data = json.dumps(incremental.document).encode()
    batch = parse_upload([UploadedFile("pull.json", data)], as_of=None, received_at=NOW)
    contact = next(c for c in batch.contacts if c.id == "12")
    assert (contact.company_id, contact.company_ids) == ("1", ["1"])


def test_a_pull_keeps_every_association_when_they_come_a_page_at_a_time():
    """One association a page: contact 13's two companies and deal 24's two come in
    two answers each, and the document holds all of them."""
    portal = problem_portal()
    portal.association_page = 1
    with StandIn(portal) as api, connector(api) as hubspot:
        pulled = hubspot.pull(MemoryCheckpoint(), previous=None, since=None)
    deals = {d["id"]: d for d in pulled.document["deals"]}
    companies_of = [
        a["id"] for a in contacts_of(pulled)["13"]["associations"]["companies"]["results"]
    ]
    assert companies_of == ["3", "1"]  # the primary first
    assert [a["id"] for a in deals["24"]["associations"]["companies"]["results"]] == ["3", "1"]
    assert [a["id"] for a in deals["21"]["associations"]["contacts"]["results"]] == ["11"]
