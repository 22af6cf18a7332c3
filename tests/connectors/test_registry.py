"""The CRMs a dataset can be connected to are one dict (connectors/registry.py): the
connection's provider choices, the connect form, the dataset page and the API's schema
follow it, and a connection no connector serves is refused with the record and field
named, stored or not."""

from __future__ import annotations

from typing import get_args

import pytest
from django.core.exceptions import ValidationError

from connectors import pulls, registry, tokens
from connectors.hubspot.connector import HubSpotConnector
from connectors.models import Connection, Pull
from connectors.salesforce.connector import SalesforceConnector
from connectors.write_access import MergeNotAllowed, configured_client
from reviews.models import Dataset
from reviews.web.api.schemas import ConnectionOut
from reviews.web.connection_views import ConnectForm
from tests.connectors.portals import problem_portal
from tests.connectors.standin import serving

pytestmark = pytest.mark.django_db
TOKEN = "pat-na1-good"
ANOTHER = ("Pipedrive", "connectors.hubspot.connector.HubSpotConnector")  # a made-up line


@pytest.fixture
def dataset():
    return Dataset.objects.create(name="acme")


def stored(dataset: Dataset) -> Connection:
    return Connection.objects.create(
        dataset=dataset, token_sealed=tokens.encrypt(TOKEN), portal_id="4242"
    )


def test_hubspot_and_salesforce_are_registered_and_hubspot_is_the_default():
    assert registry.CONNECTORS == {
        "hubspot": ("HubSpot", "connectors.hubspot.connector.HubSpotConnector"),
        "salesforce": ("Salesforce", "connectors.salesforce.connector.SalesforceConnector"),
    }
    assert registry.connector_class("hubspot") is HubSpotConnector
    assert registry.connector_class("salesforce") is SalesforceConnector
    assert registry.provider_choices() == [("hubspot", "HubSpot"), ("salesforce", "Salesforce")]
    assert (registry.label("hubspot"), registry.labels()) == ("HubSpot", "HubSpot or Salesforce")
    assert registry.stored_files("hubspot") == ("hubspot-snapshot.json",)
    assert "Account.csv" in registry.stored_files("salesforce")
    assert Connection._meta.get_field("provider").default == registry.DEFAULT_PROVIDER


def test_the_provider_choices_are_derived_from_the_registry(monkeypatch, dataset):
    field = Connection._meta.get_field("provider")
    registered = [("hubspot", "HubSpot"), ("salesforce", "Salesforce")]
    assert list(field.choices) == registered
    # The API's schema: the registry's keys, read when the schemas are built.
    assert get_args(ConnectionOut.model_fields["provider"].annotation) == ("hubspot", "salesforce")
    monkeypatch.setitem(registry.CONNECTORS, "pipedrive", ANOTHER)
    # A registry line is all it takes: the model's and the form's choices read it.
    assert list(field.choices) == [*registered, ("pipedrive", "Pipedrive")]
    assert [key for key, _ in ConnectForm().fields["provider"].choices] == [
        "hubspot",
        "salesforce",
        "pipedrive",
    ]
    connection = Connection(dataset=dataset, provider="pipedrive", portal_id="1")
    connection.token_sealed = tokens.encrypt(TOKEN)
    connection.full_clean()  # a registered provider is a valid choice
    assert str(connection) == "acme ← Pipedrive portal 1"
    monkeypatch.delitem(registry.CONNECTORS, "pipedrive")
    with pytest.raises(ValidationError, match="pipedrive"):
        connection.full_clean()


def test_a_connection_without_a_registered_provider_is_refused(dataset):
    with pytest.raises(
        registry.UnknownProvider,
        match=r"connection of dataset acme: provider 'nosuchcrm' is not a registered CRM "
        r"\(hubspot, salesforce\)",
    ):
        Connection.objects.create(
            dataset=dataset, provider="nosuchcrm", token_sealed=b"", portal_id="1"
        )
    with pytest.raises(pulls.ConnectRefused, match="connecting dataset acme: provider 'nosuchcrm'"):
        pulls.connect(dataset, TOKEN, provider="nosuchcrm")
    assert not Connection.objects.exists()


def test_a_stored_connection_whose_crm_left_the_registry_fails_its_pull_for_good(dataset):
    connection = stored(dataset)
    Connection.objects.filter(pk=connection.pk).update(provider="gone")  # a line removed
    connection.refresh_from_db()
    pull = pulls.request_pull(connection, by="test")
    failed, submission = pulls.execute_pull(pull.pk, dispatch=False)
    assert submission is None and failed.status == Pull.Status.FAILED
    assert "connection of dataset acme: provider 'gone' is not a registered CRM" in failed.error
    assert failed.progress == {}  # not retried: no connector will serve it
    assert str(failed.connection) == "acme ← gone portal 4242"
    with pytest.raises(MergeNotAllowed, match="provider 'gone' is not a registered CRM"):
        configured_client(dataset)


def test_connecting_again_to_another_portal_starts_with_a_full_pull(settings, dataset):
    portal = problem_portal()
    with serving(portal, settings):
        connection = pulls.connect(dataset, TOKEN)
        Connection.objects.filter(pk=connection.pk).update(last_full_at=connection.created_at)
        connection = pulls.connect(dataset, TOKEN)  # the same portal: nothing changes
        assert connection.last_full_at is not None
        assert pulls.request_pull(connection).kind == Pull.Kind.INCREMENTAL
        Pull.objects.all().delete()
        portal.portal_id = 5555  # the token now opens another portal
        connection = pulls.connect(dataset, TOKEN)
    assert connection.portal_id == "5555" and connection.last_full_at is None
    assert Dataset.objects.get(pk=dataset.pk).hubspot_portal_id == "5555"
    assert pulls.request_pull(connection).kind == Pull.Kind.FULL
