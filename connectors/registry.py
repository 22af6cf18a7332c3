"""The CRMs a dataset can be connected to: one line each, its label and its connector
class (connectors/<crm>/connector.py, the Connector protocol of connectors/base.py).

Everything that names a CRM derives it from here: Connection.provider's choices, the
connect form's choices, the label on the dataset page, in messages and in the API, the
stored snapshot's file name. Adding a CRM is a folder and a line here
(docs/architecture.md, "Add a CRM")."""

from __future__ import annotations

from django.conf import settings
from django.utils.module_loading import import_string

from connectors.base import Connector
from connectors.tokens import decrypt

CONNECTORS: dict[str, tuple[str, str]] = {
    "hubspot": ("HubSpot", "connectors.hubspot.connector.HubSpotConnector"),
    "salesforce": ("Salesforce", "connectors.salesforce.connector.SalesforceConnector"),
}
DEFAULT_PROVIDER = "hubspot"


class UnknownProvider(ValueError):
    """A connection names a CRM no connector is registered for."""


def provider_choices() -> list[tuple[str, str]]:
    """(key, label) of every registered CRM: Connection.provider's choices."""
    return [(key, label) for key, (label, _) in CONNECTORS.items()]


def label(provider: str) -> str:
    """The CRM's name: HubSpot for "hubspot". Raises UnknownProvider."""
    return _entry(provider)[0]


def not_connected() -> str:
    """What a page that writes to the CRM says when the run's dataset has no connection."""
    return f"No {labels()} connection: connect the dataset to its portal on its page."


def labels() -> str:
    """The registered CRMs' labels, for a message about a dataset with no connection."""
    return " or ".join(name for name, _ in CONNECTORS.values())


def snapshot_file(provider: str) -> str:
    """The name a pull's snapshot is stored under: hubspot-snapshot.json."""
    _entry(provider)
    return f"{provider}-snapshot.json"


def stored_files(provider: str) -> tuple[str, ...]:
    """The names a pull's sync is stored under: the connector's own files (Salesforce:
    Account.csv, ...), else the one snapshot document."""
    return tuple(getattr(connector_class(provider), "files", ())) or (snapshot_file(provider),)


def credentials_from(provider: str, given: dict[str, str]) -> str:
    """The one credential string a connection of `provider` keeps, from what a form or a
    command was given: HubSpot's "token"; a connector with `credentials_from` (Salesforce:
    "domain", "client_id", "client_secret") builds its own. Raises ConnectorError (a
    credential that is not well formed) or KeyError."""
    build = getattr(connector_class(provider), "credentials_from", None)
    return build(given) if build is not None else given.get("token", "")


def token_hint(provider: str, token: str) -> str:
    """Which credentials, never them: "pat-…a1b2", or what the connector's `hint` says."""
    hint = getattr(connector_class(provider), "hint", None)
    if hint is not None:
        return hint(token)[:16]
    return f"{token[:4]}…{token[-4:]}" if len(token) > 12 else "…"


def connector_class(provider: str) -> type:
    return import_string(_entry(provider)[1])


def connector_for(connection) -> Connector:
    """The connection's connector, with its token (decrypted here, never kept) and the
    settings. Raises UnknownProvider, or tokens.TokenUnreadable."""
    if connection.provider not in CONNECTORS:
        check_provider(connection.provider, where=f"connection of dataset {connection.dataset}")
    cls = connector_class(connection.provider)
    return cls.configured(settings, decrypt(connection.token_sealed))


def connector_with(provider: str, token: str) -> Connector:
    """A connector for credentials not stored yet (connecting checks them first)."""
    return connector_class(provider).configured(settings, token)


def check_provider(provider: str, *, where: str = "connection") -> None:
    """Raises UnknownProvider naming the record and field when `provider` is not one."""
    if provider not in CONNECTORS:
        known = ", ".join(sorted(CONNECTORS))
        raise UnknownProvider(
            f"{where}: provider {provider!r} is not a registered CRM ({known}): "
            "connectors/registry.py lists them"
        )


def _entry(provider: str) -> tuple[str, str]:
    check_provider(provider)
    return CONNECTORS[provider]
