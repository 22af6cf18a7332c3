"""manage.py hubspot_connect --dataset NAME [--workspace NAME] --token TOKEN [--every HOURS]:
connect a dataset to its HubSpot portal (docs/connectors.md). Without --workspace: the
workspace that has a dataset of that name (several: exit 2 naming them), else the
default. The token is checked with one call and kept encrypted; a refused token exits 2
with HubSpot's message."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from connectors.management.connect_command import checked_name, connect_dataset, connected_line
from workspaces.cli import HELP as workspace_help


class Command(BaseCommand):
    help = "Connect a dataset to a HubSpot portal with a private app access token."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--workspace", help=workspace_help)
        parser.add_argument("--token", required=True, help="the private app's access token")
        parser.add_argument("--every", type=int, help="hours between pulls (default 24)")

    def handle(self, *args, dataset: str, token: str, every: int | None, **options) -> None:
        connection = connect_dataset(
            checked_name(dataset),
            token,
            provider="hubspot",
            every=every,
            workspace=options.get("workspace"),
        )
        self.stdout.write(connected_line(connection, "portal"))
