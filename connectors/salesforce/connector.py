"""Salesforce behind the Connector protocol (connectors/base.py): the org check, the pull
(connectors/salesforce/pull.py: one CSV per object), owners' tasks as Salesforce Tasks,
and the usage of the org's daily allowance, over one SalesforceClient. No Django:
`configured` reads the SALESFORCE_* settings from whatever object it is given.

A connection's credentials are one string, sealed like a HubSpot token
(connectors/tokens.py): JSON {"domain", "client_id", "client_secret"} (`credentials`
makes it). Merges are not applied: Salesforce merges only through its SOAP API's
merge() (or Apex), not REST; the fix plan exports them for Salesforce's merge tools
(reviews/reports/salesforce_merges.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from urllib.parse import urlsplit

from connectors.base import (
    Account,
    AccountUnknown,
    Checkpoint,
    ClientConnector,
    CredentialsRefused,
    CrmTask,
    NotSupported,
    Pulled,
)
from connectors.salesforce import export
from connectors.salesforce.client import Credentials, Limits, SalesforceClient, SalesforceError
from connectors.salesforce.export import ExportProblem, soql_text
from connectors.salesforce.pull import run_pull
from connectors.salesforce.tasks import task_fields
from reviews.engine.batch import Pipeline

NOT_APPLIED = (
    "Salesforce merges records only through its SOAP API's merge() call, which revreview "
    "does not send: download the plan's Salesforce merge CSV and merge with Salesforce's "
    "own tools (docs/connectors.md#salesforce-merges)"
)


class CredentialsUnreadable(CredentialsRefused):
    """The credentials given, or kept, are not what `credentials` makes: never retried."""

    def __init__(self, message: str) -> None:
        super().__init__(None, message)


def credentials(domain: str, client_id: str, client_secret: str) -> str:
    """The one string a Salesforce connection keeps (sealed): checks the My Domain URL."""
    domain = domain.strip().rstrip("/")
    if "://" not in domain:
        domain = f"https://{domain}"
    parts = urlsplit(domain)
    if parts.scheme not in ("https", "http") or not parts.hostname or parts.path:
        raise CredentialsUnreadable(
            f"domain {domain!r}: the org's My Domain URL, such as https://acme.my.salesforce.com"
        )
    if not client_id.strip() or not client_secret.strip():
        raise CredentialsUnreadable("the app's consumer key and consumer secret are required")
    return json.dumps(
        {"domain": domain, "client_id": client_id.strip(), "client_secret": client_secret.strip()}
    )


def read_credentials(sealed_text: str) -> Credentials:
    try:
        given = json.loads(sealed_text)
        return Credentials(
            domain=str(given["domain"]),
            client_id=str(given["client_id"]),
            client_secret=str(given["client_secret"]),
        )
    except (ValueError, TypeError, KeyError):
        raise CredentialsUnreadable(
            "the Salesforce credentials are not a domain, a consumer key and a consumer "
            "secret: connect the dataset again"
        ) from None


ORGANIZATION_FILE = "Organization.csv"


class SalesforceConnector(ClientConnector):
    # No Dataset field names the org: the connection's portal_id (the org id) is checked.
    dataset_account_field = None
    dataset_url_field = "salesforce_url"
    crm = "Salesforce"
    applies_merges = False  # connectors/merges.py refuses before anything is sent
    merges_refusal = NOT_APPLIED
    # What a pull stores: a file per object, and the org's own record (its currency).
    files = (*(export.file_name(name) for name in export.OBJECTS), ORGANIZATION_FILE)

    def __init__(self, credentials: Credentials, limits: Limits | None = None, **options) -> None:
        self.client = SalesforceClient(credentials, limits, **options)
        self._users: dict[str, str | None] = {}  # an owner's name -> their active User Id

    @classmethod
    def configured(cls, settings: object, token: str) -> SalesforceConnector:
        """A connector with the SALESFORCE_* settings: the API version, the requests of the
        org's day it leaves to other integrations, retries and the timeout."""
        limits = Limits(
            daily_floor=settings.SALESFORCE_DAILY_FLOOR,
            max_retries=settings.SALESFORCE_MAX_RETRIES,
            backoff_seconds=settings.SALESFORCE_BACKOFF_SECONDS,
            timeout_seconds=settings.SALESFORCE_TIMEOUT_SECONDS,
            api_version=settings.SALESFORCE_API_VERSION,
        )
        return cls(read_credentials(token), limits)

    @staticmethod
    def credentials_from(given: dict[str, str]) -> str:
        """From the connect form's or command's fields (registry.credentials_from)."""
        return credentials(
            given.get("domain", ""), given.get("client_id", ""), given.get("client_secret", "")
        )

    @staticmethod
    def hint(token: str) -> str:
        """Which app, never its secret: the consumer key's first and last characters."""
        try:
            key = read_credentials(token).client_id
        except CredentialsUnreadable:
            return "…"
        return f"{key[:4]}…{key[-4:]}" if len(key) > 12 else "…"

    def check(self) -> Account:
        """The org the credentials open: its Organization record (one token, one query)."""
        query = (
            "SELECT Id, Name, DefaultCurrencyIsoCode, TimeZoneSidKey, IsSandbox, "
            "OrganizationType FROM Organization"
        )
        records = next(self.client.query_pages(query, deleted=False), ([], ""))[0]
        if not records or not records[0].get("Id"):
            raise AccountUnknown(None, "Salesforce answered no Organization record")
        org = {k: v for k, v in records[0].items() if k != "attributes"}
        details = json.loads(json.dumps(org, default=str))  # Decimal-free, for a JSONField
        details["instance_url"] = self.client.instance_url
        return Account(
            id=str(org["Id"]),
            currency=str(org.get("DefaultCurrencyIsoCode") or "")[:8],
            time_zone=str(org.get("TimeZoneSidKey") or "")[:64],
            details=details,
            url=self.client.instance_url,
        )

    def pull(
        self, checkpoint: Checkpoint, *, previous: dict | None, since: datetime | None
    ) -> Pulled:
        """`previous`: the last pull's stored files by name (Account.csv: bytes)."""
        self.client.while_waiting = checkpoint.flush
        try:
            result = run_pull(self.client, checkpoint, previous=previous, since=since)
        except ExportProblem as error:
            raise NotSupported(str(error)) from None
        # A single-currency org's opportunities name no currency: the org's is theirs.
        org = self.check()
        result.files[ORGANIZATION_FILE] = export.write_csv(
            ["Id", "Name", "DefaultCurrencyIsoCode"],
            [[org.id, str(org.details.get("Name") or ""), org.currency]],
        )
        return Pulled(
            document={},
            pipelines=[],  # the stages are OpportunityStage.csv, read with the export
            pipelines_problem="",
            records=result.records,
            changed=result.changed,
            removed=result.removed,
            files=result.files,
        )

    def pipelines(self) -> list[Pipeline]:
        raise NotSupported("Salesforce's stages come with each pull (OpportunityStage.csv)")

    def merge(self, object_type: str, primary_id: str, merged_id: str) -> dict:
        raise NotSupported(NOT_APPLIED)

    def snapshot(self, object_type: str, ids: list[str]) -> dict[str, dict]:
        raise NotSupported(NOT_APPLIED)

    def recreate(self, object_type: str, record: dict) -> str:
        raise NotSupported(NOT_APPLIED)

    def associate(
        self, object_type: str, new_id: str, record: dict, now: Callable[[str, str], str]
    ) -> tuple[int, list[str]]:
        raise NotSupported(NOT_APPLIED)

    def create_task(self, task: CrmTask) -> str:
        """POST /sobjects/Task, sent once: the new Task's id. SalesforceError (its status)
        when Salesforce refused or did not answer (connectors/owner_tasks.py tells which).
        An owner named by name (the export reader resolves OwnerId to it) is assigned when
        exactly one active User has that name; otherwise the task goes unassigned (to
        the integration user) with the name in its description."""
        if not task.owner_id and task.owner_name:
            task = replace(task, owner_id=self._active_user(task.owner_name))
        return str(self.client.create("Task", task_fields(task))["id"])

    def _active_user(self, name: str) -> str | None:
        if name not in self._users:
            query = f"SELECT Id FROM User WHERE Name = '{soql_text(name)}' AND IsActive = true"  # noqa: S608
            try:
                found = next(self.client.query_pages(query, deleted=False), ([], ""))[0]
            except SalesforceError:  # read, not written: the task is still sent, unassigned
                found = []
            self._users[name] = str(found[0]["Id"]) if len(found) == 1 else None
        return self._users[name]
