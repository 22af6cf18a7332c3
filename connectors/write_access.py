"""Who may write to which CRM, checked before any merge, undo or owner's task is sent
(connectors/merges.py, undo.py, owner_tasks.py): a staff member, for a run of a dataset,
through the connector of the dataset's own connection, to the portal (or org) the
dataset syncs, and only to a CRM whose merges revreview sends."""

from __future__ import annotations

from connectors import registry
from connectors.base import Connector, ConnectorError
from connectors.models import Connection
from reviews.models import Dataset, ReviewRun


class MergeNotAllowed(Exception):
    """The request cannot be made (not staff, no dataset, no plan), and why."""


def applies_merges(client) -> None:
    """MergeNotAllowed, with the connector's reason, for a CRM whose merges revreview
    exports rather than sends (Salesforce: a SOAP call)."""
    if not getattr(client, "applies_merges", True):
        raise MergeNotAllowed(
            getattr(client, "merges_refusal", "this CRM's merges are not applied")
        )


def staff_dataset(run: ReviewRun, user):
    """The run's dataset, read afresh, when `user` is staff: what every write to the CRM
    (a merge, an undo, a task) checks first; MergeNotAllowed otherwise."""
    if user is None or not user.is_authenticated or not user.is_staff:
        raise MergeNotAllowed("merges are applied by a staff member")
    # Read afresh: the portal id decides where merges go, and may have just been set.
    dataset = Dataset.objects.filter(pk=run.batch.dataset_id).first()
    if dataset is None:
        raise MergeNotAllowed(f"run {run.pk} belongs to no dataset: no CRM to merge in")
    return dataset


def same_portal(dataset, client) -> None:
    """Merges go only to the portal the dataset syncs: its HubSpot portal id (the field
    the connector names, dataset_account_field) must be set and, when the client can
    tell which portal its token opens (check()), be that one. A token of another account
    would merge whatever records there carry the same ids."""
    field = getattr(client, "dataset_account_field", "hubspot_portal_id")
    if field:
        expected = getattr(dataset, field)
    else:  # no Dataset field names this CRM's account: the connection's does (its org id)
        connection = Connection.objects.filter(dataset=dataset).first()
        expected = connection.portal_id if connection else ""
    crm = getattr(client, "crm", "HubSpot")
    if not expected:
        raise MergeNotAllowed(
            f"dataset {dataset.name} has no {crm} portal id: set it (admin, Datasets) "
            "so merges go to the portal it syncs"
        )
    check = getattr(client, "check", None)
    if check is None:
        return
    try:
        portal = check().id
    except ConnectorError as error:
        raise MergeNotAllowed(f"cannot tell which {crm} portal the token opens: {error}") from None
    if portal != expected:
        raise MergeNotAllowed(
            f"the {crm} token opens portal {portal}, dataset {dataset.name} syncs portal "
            f"{expected}: nothing sent"
        )


def configured_client(dataset: Dataset | None) -> Connector | None:
    """The connector of the dataset's connection (its token decrypted here), or None when
    the dataset has none (connect it: docs/connectors.md). Raises MergeNotAllowed when no
    connector serves the connection's provider."""
    connection = Connection.objects.filter(dataset=dataset).first() if dataset else None
    if connection is None:
        return None
    try:
        return registry.connector_for(connection)
    except registry.UnknownProvider as error:
        raise MergeNotAllowed(str(error)) from None
