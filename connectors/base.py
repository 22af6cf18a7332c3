"""What a CRM connector offers revreview, and the errors it raises. Plain Python, no Django:
each CRM's folder (connectors/hubspot/, ...) implements `Connector` with its own client,
and the Django side (connectors/pulls.py, connectors/merges.py) uses only this.

A connector is made for one account's credentials (connectors/registry.py makes it from
a connection's sealed token and the settings) and closed after use. Every call may raise
ConnectorError: the CRM refused (its status and message) or did not answer (no status).
The credentials are never part of a message."""

from __future__ import annotations

import functools
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import httpx

from reviews.engine.batch import Pipeline


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The certificate authorities every outgoing HTTPS client trusts (a CRM's, the model
    gateway's: httpx's default, certifi, or SSL_CERT_FILE / SSL_CERT_DIR), loaded once
    per process and shared: loading them took about 25 ms of CPU for each client made,
    and the gateway makes one for each model call."""
    return httpx.create_ssl_context()


class ConnectorError(Exception):
    """The CRM refused a request (its status and message), or gave no answer (status
    None). `crm` names it in the message: "HubSpot answered 404: ..."."""

    crm = "the CRM"

    def __init__(self, status: int | None, message: str, *, body: dict | None = None) -> None:
        super().__init__(f"{self.crm} answered {status}: {message}" if status else message)
        self.status = status
        self.message = message
        self.body = body or {}


class CredentialsRefused(ConnectorError):
    """The token is wrong, revoked or lacks a permission: connect again (never retried)."""


class LimitReached(ConnectorError):
    """The account's API limit for the day is spent, or what is left of it is down to the
    floor revreview leaves to the account's other integrations."""


class AccountUnknown(ConnectorError):
    """The CRM took the credentials but named no account: its message is the whole reason."""


class NotSupported(ConnectorError):
    """The connector does not offer this (yet): nothing was sent."""

    def __init__(self, message: str) -> None:
        super().__init__(None, message)


class WriteRefused(Exception):
    """The CRM answered and did not make the change (a 4xx): its status, its answer and
    its message. Safe to ask again after a fix, never blindly."""

    def __init__(self, status: int, answer: Any, message: str = "") -> None:
        super().__init__(message or f"the CRM refused the change ({status})")
        self.status, self.answer = status, answer


class WriteUnanswered(Exception):
    """No answer, or a 5xx, to a change sent once: the CRM may or may not have made it."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class MergeRefused(WriteRefused):
    """The CRM answered and did not merge (a 4xx)."""


class MergeUnanswered(WriteUnanswered):
    """No answer, or a 5xx: the CRM may or may not have merged."""


@dataclass(frozen=True, slots=True)
class Account:
    """What a connector's check found: the account the credentials open."""

    id: str  # HubSpot: the portal id (Hub ID)
    currency: str  # the account's company currency, "" when it names none
    time_zone: str
    details: dict  # the CRM's whole answer, kept with the connection
    # Where its records' pages are, if the CRM says (Salesforce: the org's instance_url)
    url: str = ""


@dataclass(frozen=True, slots=True)
class Usage:
    """What this connector has spent of the account's API limits, and what is left."""

    requests: int  # sent, retries included
    waited_seconds: float  # asleep for a rate limit
    in_flight_seconds: float  # between sending a request and its answer
    left_today: int | None  # of the account's daily requests, when the CRM says
    limit_today: int | None = None  # the account's whole daily allowance, likewise


@dataclass(slots=True)
class Pulled:
    """One pull: the account's records as a CRM API JSON document (the upload format
    reviews/engine/ingest/api_json.py reads), and its deal pipelines."""

    # {"companies": [...], "contacts": [...], "deals": [...]}, and "properties": the
    # property names the account returned for each list, when the objects keep only
    # their non-blank values (api_json.py: the fields the pull lacks are read from it).
    document: dict
    pipelines: list[Pipeline]  # [] when the account's could not be read (see problem)
    pipelines_problem: str  # why they could not be read, "" when they were
    records: int  # in the document
    changed: int  # fetched by this pull (every record in a full pull)
    removed: int  # archived or merged away since the previous document
    # The files the sync is stored as, by name, when the CRM's are not one JSON document
    # (Salesforce: one CSV per object); empty: the document, as registry.snapshot_file.
    files: dict[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CrmTask:
    """A task to create in the CRM, on one record (connectors/owner_tasks.py makes them
    from a fix plan's to-do list)."""

    object_type: str  # companies | contacts | deals
    record_id: str
    subject: str
    body: str
    owner_id: str | None  # the CRM's user id; None leaves the task unassigned
    due: datetime
    priority: str  # HIGH | MEDIUM | LOW
    # The owner as the export names them, when not by id (Salesforce's export reader
    # gives the User's name): a connector that can look the name up assigns the task.
    owner_name: str = ""


class Checkpoint(Protocol):
    """Where a pull keeps each answer as it comes, so a pull that stops resumes."""

    def chunks(self) -> list[tuple[str, object]]:
        """What earlier attempts of this pull recorded, in order: (step, data)."""

    def progress(self) -> dict:
        """The progress recorded with the last chunk ({} for a new pull)."""

    def record(self, step: str, data: object, progress: dict) -> None:
        """Keep one answer and the progress after it, together."""

    def flush(self) -> None:
        """Write what is held; called while the connector waits on a rate limit."""


class Connector(Protocol):
    """What revreview asks of a CRM. Methods a CRM does not offer yet raise NotSupported."""

    # The Dataset field that holds the account's id (HubSpot: "hubspot_portal_id"), set
    # when connecting and checked before a merge; None: the dataset has none.
    dataset_account_field: str | None
    # The Dataset field that holds the account's address (Salesforce: "salesforce_url"),
    # set when connecting: the fix plan links records to their pages there.
    dataset_url_field: str | None

    @classmethod
    def configured(cls, settings: object, token: str) -> Connector:
        """One for `token`, with its settings read from `settings` (django.conf's)."""

    def check(self) -> Account:
        """The account the credentials open (one call). Raises ConnectorError."""

    def pull(
        self, checkpoint: Checkpoint, *, previous: dict | None, since: datetime | None
    ) -> Pulled:
        """Every record (`previous` None: a full pull), or the records modified at or
        after `since` put into `previous` (the last pull's document, or its files by
        name for a connector that stores files): incremental."""

    def pipelines(self) -> list[Pipeline]:
        """The account's deal pipelines and their stages, as the review reads them."""

    def merge(self, object_type: str, primary_id: str, merged_id: str) -> dict:
        """Merge one record into the survivor, sent once. Raises MergeRefused (the CRM
        answered no) or MergeUnanswered (it may have merged)."""

    def snapshot(self, object_type: str, ids: list[str]) -> dict[str, dict]:
        """The records as they are now, every property and association, by id: what a
        merge is undone from. Raises ConnectorError (then nothing is merged)."""

    def recreate(self, object_type: str, record: dict) -> str:
        """A record made again from its snapshot, sent once: its new id. Raises
        WriteRefused or WriteUnanswered."""

    def associate(
        self, object_type: str, new_id: str, record: dict, now: Callable[[str, str], str]
    ) -> tuple[int, list[str]]:
        """The snapshot's associations made again from `new_id`, to each record's id
        `now(type, id)`: (how many made, the CRM's messages for the others)."""

    def create_task(self, task: CrmTask) -> str:
        """One owner's to-do item of a fix plan, as a task in the CRM on its record; the
        new task's id. Sent once: a 4xx is ConnectorError with that status (nothing
        made), no answer or a 5xx one with status None or 5xx (it may have been made)."""

    def usage(self) -> Usage:
        """What this connector has spent of the account's limits, and what is left."""

    def close(self) -> None: ...


class ClientConnector:
    """What every connector over one HTTP client shares: its usage of the account's
    limits, read from the client's counters, and closing that client (also as a `with`
    block)."""

    client: Any  # requests, waited, in_flight, daily_left, daily_limit, close()

    def usage(self) -> Usage:
        return Usage(
            requests=self.client.requests,
            waited_seconds=self.client.waited,
            in_flight_seconds=self.client.in_flight,
            left_today=self.client.daily_left,
            limit_today=self.client.daily_limit,
        )

    def close(self) -> None:
        self.client.close()

    def __enter__(self):  # the connector itself, whichever it is
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
