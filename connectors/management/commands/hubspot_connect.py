"""manage.py hubspot_connect --dataset NAME [--workspace NAME] --token TOKEN [--every HOURS]:
connect a dataset to its HubSpot portal (docs/connectors.md). Without --workspace: the
workspace that has a dataset of that name (several: exit 2 naming them), else the
default. The token is checked with one call and kept encrypted; a refused token exits 2
with HubSpot's message."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from connectors.pulls import ConnectRefused, connect
from reviews.models import Dataset
from reviews.orchestration.intake.submit import dataset_name
from workspaces.cli import HELP as workspace_help
from workspaces.cli import workspace_holding
from workspaces.models import Workspace

EXIT_REFUSED = 2


class Command(BaseCommand):
    help = "Connect a dataset to a HubSpot portal with a private app access token."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--workspace", help=workspace_help)
        parser.add_argument("--token", required=True, help="the private app's access token")
        parser.add_argument("--every", type=int, help="hours between pulls (default 24)")

    def handle(self, *args, dataset: str, token: str, every: int | None, **options) -> None:
        try:
            name = dataset_name(dataset)
        except Exception as error:  # IngestError: the name's problem
            raise CommandError(str(error), returncode=EXIT_REFUSED) from None
        workspace = workspace_holding(
            options.get("workspace"),
            Workspace.objects.filter(pk__in=Dataset.objects.filter(name=name).values("workspace")),
            f"dataset {name!r}",
            returncode=EXIT_REFUSED,
        )
        with transaction.atomic():
            target, _ = Dataset.objects.get_or_create(name=name, workspace=workspace)
        try:
            connection = connect(target, token, provider="hubspot", every_hours=every)
        except ConnectRefused as error:
            raise CommandError(str(error), returncode=EXIT_REFUSED) from None
        self.stdout.write(
            f"dataset {target.name} connected to {connection.provider_label} portal "
            f"{connection.portal_id} "
            f"({connection.company_currency or '-'}, {connection.time_zone or '-'}); "
            f"pulled every {connection.every_hours} h, the first pull is due now"
        )
