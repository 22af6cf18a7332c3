"""What hubspot_connect and salesforce_connect share: the dataset found or made in its
workspace, the connection made, and the line that says so; refusals exit 2."""

from __future__ import annotations

from django.core.management.base import CommandError
from django.db import transaction

from connectors.models import Connection
from connectors.pulls import ConnectRefused, connect
from reviews.models import Dataset
from reviews.orchestration.intake.submit import dataset_name
from workspaces.cli import workspace_holding
from workspaces.models import Workspace

EXIT_REFUSED = 2


def checked_name(dataset: str) -> str:
    try:
        return dataset_name(dataset)
    except Exception as error:  # IngestError: the name's problem
        raise CommandError(str(error), returncode=EXIT_REFUSED) from None


def connect_dataset(
    name: str, credentials: str, *, provider: str, every: int | None, workspace: str | None
) -> Connection:
    """Connect dataset `name` (made if new) of the workspace holding it (--workspace)."""
    holder = workspace_holding(
        workspace,
        Workspace.objects.filter(pk__in=Dataset.objects.filter(name=name).values("workspace")),
        f"dataset {name!r}",
        returncode=EXIT_REFUSED,
    )
    with transaction.atomic():
        target, _ = Dataset.objects.get_or_create(name=name, workspace=holder)
    try:
        return connect(target, credentials, provider=provider, every_hours=every)
    except ConnectRefused as error:
        raise CommandError(str(error), returncode=EXIT_REFUSED) from None


def connected_line(connection: Connection, account: str) -> str:
    """'dataset acme connected to HubSpot portal 4411 (EUR, Europe/Berlin); ...'"""
    return (
        f"dataset {connection.dataset.name} connected to {connection.provider_label} "
        f"{account} {connection.portal_id} "
        f"({connection.company_currency or '-'}, {connection.time_zone or '-'}); "
        f"pulled every {connection.every_hours} h, the first pull is due now"
    )
