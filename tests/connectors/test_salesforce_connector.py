"""Salesforce behind the Connector protocol (connectors/salesforce/), against the loopback
stand-in: the org check, a full pull by pages into Data Loader CSVs, an incremental pull
that stores what a full pull of the changed org would, a pull that stops and resumes,
the session's refresh and its clear failures, the org's daily allowance, and a Task
made for an owner. No Django."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from connectors.base import Account, CredentialsRefused, CrmTask, LimitReached, NotSupported
from connectors.salesforce import export
from connectors.salesforce.client import Limits, SalesforceError
from connectors.salesforce.connector import (
    CredentialsUnreadable,
    SalesforceConnector,
    credentials,
    read_credentials,
)
from connectors.salesforce.export import REQUIRED
from tests.connectors.salesforce_org import read_datetime, small_org
from tests.connectors.salesforce_standin import CLIENT_SECRET, StandIn, credentials_for
from tests.connectors.test_hubspot_connector import MemoryCheckpoint


def connector(api: StandIn, *, secret: str = CLIENT_SECRET, floor: int = 0, **limits):
    sealed = credentials(**credentials_for(api, secret))
    options = Limits(daily_floor=floor, backoff_seconds=0.01, **limits)
    return SalesforceConnector(read_credentials(sealed), options)


def full_pull(api: StandIn) -> dict[str, bytes]:
    with connector(api) as salesforce:
        return salesforce.pull(MemoryCheckpoint(), previous=None, since=None).files


def rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))


def test_check_names_the_org_its_currency_and_time_zone_never_the_secret():
    with StandIn(small_org()) as api, connector(api) as salesforce:
        account = salesforce.check()
    assert account == Account(
        id="00D5g000004ABCDEAZ",
        currency="USD",
        time_zone="Europe/Paris",
        details=account.details,
        url=api.url,  # the token's instance_url: where its records' pages are
    )
    assert CLIENT_SECRET not in repr(account.details)
    assert CLIENT_SECRET not in repr(read_credentials(credentials(**credentials_for(api))))


def test_a_full_pull_reads_every_page_into_one_data_loader_csv_per_object():
    org = small_org()
    with StandIn(org) as api:
        api.state.page_size = 2
        with connector(api) as salesforce:
            pulled = salesforce.pull(MemoryCheckpoint(), previous=None, since=None)
            usage = salesforce.usage()
    files = pulled.files
    assert sorted(files) == sorted([*(f"{name}.csv" for name in REQUIRED), "Organization.csv"])
    # The org's own record: a single-currency org's amounts are in its currency.
    assert rows(files["Organization.csv"]) == [
        {"Id": org.org_id, "Name": "Acme (stand-in)", "DefaultCurrencyIsoCode": "USD"}
    ]
    more = [path for method, path in api.state.paths if "/query/01g" in path]
    assert more, "several pages, followed by nextRecordsUrl"
    for name, required in REQUIRED.items():
        header = next(csv.reader(io.StringIO(files[f"{name}.csv"].decode())))
        assert set(required) <= set(header), name
        assert header[0] == "Id"
        assert len(rows(files[f"{name}.csv"])) == len(org.records[name])
    accounts = {r["Name"]: r for r in rows(files["Account.csv"])}
    assert "BillingAddress" not in accounts["Acme Corp"]  # compound: its parts are fields
    assert accounts["Acme Corp"]["Region__c"] == "EMEA"  # a custom field, read by describe
    assert accounts['Globex, "the" company']["BillingCity"] == "Köln\nNord"
    assert accounts["Acme Corp"]["IsDeleted"] == "false"
    won = {r["Name"]: r for r in rows(files["Opportunity.csv"])}["Acme renewal"]
    assert (won["Amount"], won["IsWon"], won["CloseDate"]) == ("125000.50", "true", "")
    assert won["SystemModstamp"].endswith(".000+0000")
    stages = {r["ApiName"]: r for r in rows(files["OpportunityStage.csv"])}
    assert stages["Legal Review"]["DefaultProbability"] == "80"  # the custom stage
    assert files["Account.csv"].count(b"\r\n") >= 4  # RFC 4180 line ends
    assert pulled.records == sum(len(v) for v in org.records.values())
    assert usage.limit_today == 15_000 and usage.left_today == 15_000 - api.state.used


def change(org) -> None:
    """A fix, a merge, a deleted opportunity and a new critical, as a person makes them."""
    accounts = {r["Name"]: rid for rid, r in org.records["Account"].items()}
    acme, duplicate = accounts["Acme Corp"], accounts["ACME Corporation"]
    moved = org.add("Contact", AccountId=duplicate, LastName="Lee", Email="lee@acme.test")
    org.update("Account", acme, Website="https://acme.test")  # a fix
    org.merge("Account", acme, duplicate)  # the duplicate, merged away
    lost = next(rid for rid, r in org.records["Opportunity"].items() if r["Name"].startswith("Glo"))
    org.delete("Opportunity", lost)
    org.add(
        "Opportunity", AccountId=acme, Name="Big win", Amount=Decimal("900000"),
        StageName="Closed Won", IsClosed=True, IsWon=True, Probability=Decimal(100),
    )  # fmt: skip
    assert org.records["Contact"][moved]["AccountId"] == acme


def test_an_incremental_pull_stores_what_a_full_pull_of_the_changed_org_holds():
    org = small_org()
    with StandIn(org) as api:
        api.state.page_size = 2
        first = full_pull(api)
        since = read_datetime(max(r["SystemModstamp"] for r in org.records["Lead"].values()))
        change(org)
        with connector(api) as salesforce:
            before = api.state.used
            pulled = salesforce.pull(MemoryCheckpoint(), previous=first, since=since)
            spent = api.state.used - before
        expected = full_pull(api)
    assert pulled.files == expected  # byte for byte: the same rows, in the same order
    assert pulled.files != first
    assert pulled.changed < pulled.records and pulled.removed == 2
    queries = [p for m, p in api.state.paths[-spent:] if p.endswith(("/queryAll", "/query"))]
    assert queries, "the incremental pull asked only for what changed"
    merged = {r["Name"]: r for r in rows(pulled.files["Account.csv"])}["ACME Corporation"]
    assert merged["IsDeleted"] == "true" and merged["MasterRecordId"].startswith("001")
    gone = {r["Name"]: r for r in rows(pulled.files["Opportunity.csv"])}["Globex expansion"]
    assert gone["IsDeleted"] == "true"


def test_a_field_readable_since_the_last_pull_reads_its_object_whole():
    org = small_org()
    org.hidden["Account"] = {"Region__c"}  # then the admin grants read access to it
    with StandIn(org) as api:
        first = full_pull(api)
        org.hidden.clear()
        since = read_datetime(max(r["SystemModstamp"] for r in org.records["Lead"].values()))
        with connector(api) as salesforce:
            pulled = salesforce.pull(MemoryCheckpoint(), previous=first, since=since)
        expected = full_pull(api)
    assert pulled.files == expected and b"EMEA" in pulled.files["Account.csv"]
    assert pulled.changed == len(org.records["Account"])  # the others: nothing changed


def test_a_pull_that_stops_resumes_from_its_checkpoint_and_stores_the_same_files():
    org = small_org()
    with StandIn(org) as api:
        api.state.page_size = 1
        whole = full_pull(api)
        used_by_whole = api.state.used
        api.state.used = 0
        api.state.refuse_after = 9  # Salesforce refuses part way: the day is spent
        checkpoint = MemoryCheckpoint()
        with connector(api) as salesforce, pytest.raises(LimitReached) as stopped:
            salesforce.pull(checkpoint, previous=None, since=None)
        assert stopped.value.status == 403 and "REQUEST_LIMIT_EXCEEDED" in str(stopped.value)
        assert checkpoint.kept, "the pages before the refusal are kept"
        api.state.refuse_after, api.state.used = None, 0
        with connector(api) as salesforce:
            resumed = salesforce.pull(checkpoint, previous=None, since=None)
    assert resumed.files == whole
    assert api.state.used < used_by_whole  # it did not start again from the beginning


def test_an_object_too_wide_for_one_query_is_read_in_groups_of_fields(monkeypatch):
    org = small_org()
    with StandIn(org) as api:
        whole = full_pull(api)
        monkeypatch.setattr(export, "QUERY_BUDGET", 200)  # as if Account had 600 fields
        assert len(export.field_groups("Account", rows(whole["Account.csv"])[0].keys())) > 2
        api.state.page_size, api.state.refuse_after = 1, 25
        checkpoint = MemoryCheckpoint()
        with connector(api) as salesforce, pytest.raises(LimitReached):
            salesforce.pull(checkpoint, previous=None, since=None)
        api.state.refuse_after = None
        with connector(api) as salesforce:
            grouped = salesforce.pull(checkpoint, previous=None, since=None).files
        since = read_datetime(max(r["SystemModstamp"] for r in org.records["Lead"].values()))
        change(org)
        with connector(api) as salesforce:
            changed = salesforce.pull(MemoryCheckpoint(), previous=grouped, since=since).files
        monkeypatch.setattr(export, "QUERY_BUDGET", 12_000)
        assert changed == full_pull(api)
    assert grouped == whole


def test_an_expired_session_is_renewed_once_and_a_refused_renewal_fails_clearly():
    with StandIn(small_org()) as api:
        with connector(api) as salesforce:
            salesforce.check()
            api.state.expire_sessions()  # the session timed out: a new token, no harm
            assert salesforce.pull(MemoryCheckpoint(), previous=None, since=None).records
        assert api.state.tokens_issued == 2
        with connector(api) as salesforce:
            salesforce.check()
            api.state.expire_sessions()
            api.state.secret = "rotated"  # the app's secret changed since connecting
            with pytest.raises(CredentialsRefused) as refused:
                salesforce.pull(MemoryCheckpoint(), previous=None, since=None)
        assert refused.value.status == 400 and "invalid_client" in str(refused.value)
        assert CLIENT_SECRET not in str(refused.value)


def test_a_401_after_one_new_token_is_a_clear_refusal_not_a_loop():
    with StandIn(small_org()) as api, connector(api) as salesforce:
        api.state.fail_next = [401, 401]
        with pytest.raises(CredentialsRefused) as refused:
            salesforce.check()
    assert refused.value.status == 401 and "INVALID_SESSION_ID" in str(refused.value)
    assert api.state.tokens_issued == 2


def test_the_daily_floor_stops_a_pull_and_names_the_setting():
    with StandIn(small_org()) as api:
        api.state.used = 14_000
        with connector(api, floor=1_000 - 5) as salesforce:
            with pytest.raises(LimitReached) as stopped:
                salesforce.pull(MemoryCheckpoint(), previous=None, since=None)
    assert "SALESFORCE_DAILY_FLOOR" in str(stopped.value)
    assert api.state.used == 14_005  # it stopped at the floor, not at Salesforce's 403


def test_server_errors_are_retried_with_backoff():
    with StandIn(small_org()) as api, connector(api) as salesforce:
        api.state.fail_next = [503, 500]
        assert salesforce.pull(MemoryCheckpoint(), previous=None, since=None).records
        assert salesforce.usage().waited_seconds == pytest.approx(0.03)
        api.state.fail_next = [500] * 3
    with StandIn(small_org()) as api, connector(api, max_retries=2) as salesforce:
        api.state.fail_next = [500] * 3
        with pytest.raises(SalesforceError) as failed:
            salesforce.check()
    assert failed.value.status == 500


def test_a_required_field_the_user_cannot_read_is_named():
    org = small_org()
    org.hidden["Account"] = {"Website"}
    with StandIn(org) as api, connector(api) as salesforce:
        with pytest.raises(NotSupported, match=r"Account: .*Website.*read access"):
            salesforce.pull(MemoryCheckpoint(), previous=None, since=None)


def test_credentials_that_are_not_well_formed_are_refused_before_any_call():
    with pytest.raises(CredentialsUnreadable, match="My Domain"):
        credentials("https://acme.my.salesforce.com/path", "key", "secret")
    with pytest.raises(CredentialsUnreadable, match="consumer key"):
        credentials("acme.my.salesforce.com", "", "secret")
    with pytest.raises(CredentialsUnreadable, match="connect the dataset again"):
        read_credentials("pat-na1-a-hubspot-token")
    assert SalesforceConnector.hint(credentials("acme.my.salesforce.com", "3MVG9abcdefgh", "s"))


def test_hostile_values_become_valid_utf8_cells_kept_exactly():
    org = small_org()
    acme = next(iter(org.records["Account"]))
    huge = "9" * 5000
    org.update("Account", acme, Name="A\x00B \ud800 C")
    opp = next(iter(org.records["Opportunity"]))
    org.update("Opportunity", opp, Amount=Decimal(huge))
    with StandIn(org) as api:
        files = full_pull(api)
    account = {r["Id"]: r for r in rows(files["Account.csv"])}[acme]
    assert account["Name"] == "A\x00B \ufffd C"
    assert {r["Id"]: r for r in rows(files["Opportunity.csv"])}[opp]["Amount"] == huge


def test_an_owner_task_is_a_salesforce_task_on_its_record():
    org = small_org()
    account = next(iter(org.records["Account"]))
    contact = next(iter(org.records["Contact"]))
    owner = next(iter(org.records["User"]))
    due = datetime(2026, 5, 9, 12, tzinfo=UTC)
    task = CrmTask("companies", account, "Fix: duplicate", "notes", owner, due, "HIGH")
    with StandIn(org) as api, connector(api) as salesforce:
        made = salesforce.create_task(task)
        on_contact = salesforce.create_task(
            CrmTask("contacts", contact, "Fix: email", "", None, due + timedelta(days=1), "LOW")
        )
        unknown = CrmTask("deals", "006000000000000AAA", "x", "", None, due, "LOW")
        with pytest.raises(SalesforceError) as refused:
            salesforce.create_task(unknown)
    assert org.tasks[made] == {
        "Subject": "Fix: duplicate",
        "Description": "notes",
        "ActivityDate": "2026-05-09",
        "Priority": "High",
        "Status": "Not Started",
        "WhatId": account,
        "OwnerId": owner,
    }
    assert org.tasks[on_contact]["WhoId"] == contact and "OwnerId" not in org.tasks[on_contact]
    assert refused.value.status == 400 and "INVALID_CROSS_REFERENCE_KEY" in str(refused.value)


def test_an_owner_named_by_name_is_assigned_when_one_active_user_has_it():
    org = small_org()
    account = next(iter(org.records["Account"]))
    users = {r["Name"]: rid for rid, r in org.records["User"].items()}
    due = datetime(2026, 5, 9, 12, tzinfo=UTC)

    def task(name: str) -> CrmTask:
        return CrmTask("companies", account, "Fix", "", None, due, "LOW", owner_name=name)

    with StandIn(org) as api, connector(api) as salesforce:
        ana = salesforce.create_task(task("Ana Ruiz"))
        ben = salesforce.create_task(task("Ben Okafor"))  # inactive: not assigned
        odd = salesforce.create_task(task("O'Brien \\ \n AND x"))  # escaped, no one
        again = salesforce.create_task(task("Ana Ruiz"))
    assert org.tasks[ana]["OwnerId"] == org.tasks[again]["OwnerId"] == users["Ana Ruiz"]
    assert "OwnerId" not in org.tasks[ben] and "OwnerId" not in org.tasks[odd]
    lookups = [p for m, p in api.state.paths if p.endswith("/query")]
    assert len(lookups) == 3  # a name is looked up once per connector
