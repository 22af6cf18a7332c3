"""manage.py salesforce_connect --dataset NAME [--workspace NAME] --domain URL --client-id KEY
[--client-secret SECRET] [--every HOURS]: connect a dataset to its Salesforce org through an
External Client App's client-credentials flow (docs/connectors.md#salesforce). The secret
may come from the SALESFORCE_CLIENT_SECRET environment variable instead of the command
line (which other users of the machine can read). Without --workspace: the workspace
that has a dataset of that name (several: exit 2 naming them), else the default. The
credentials are checked with one token and one query and kept encrypted; refused ones
exit 2 with Salesforce's message."""

from __future__ import annotations

import os

from django.core.management.base import BaseCommand, CommandError

from connectors import registry
from connectors.base import ConnectorError
from connectors.management.connect_command import (
    EXIT_REFUSED,
    checked_name,
    connect_dataset,
    connected_line,
)
from workspaces.cli import HELP as workspace_help


class Command(BaseCommand):
    help = "Connect a dataset to a Salesforce org with an External Client App's credentials."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--workspace", help=workspace_help)
        parser.add_argument("--domain", required=True, help="https://acme.my.salesforce.com")
        parser.add_argument("--client-id", required=True, help="the app's consumer key")
        parser.add_argument(
            "--client-secret", help="the app's consumer secret (else SALESFORCE_CLIENT_SECRET)"
        )
        parser.add_argument("--every", type=int, help="hours between pulls (default 24)")

    def handle(self, *args, dataset: str, every: int | None, **options) -> None:
        secret = options.get("client_secret") or os.environ.get("SALESFORCE_CLIENT_SECRET", "")
        given = {"domain": options["domain"], "client_id": options["client_id"],
                 "client_secret": secret}  # fmt: skip
        name = checked_name(dataset)
        try:
            credentials = registry.credentials_from("salesforce", given)
        except ConnectorError as error:
            raise CommandError(error.message, returncode=EXIT_REFUSED) from None
        connection = connect_dataset(
            name,
            credentials,
            provider="salesforce",
            every=every,
            workspace=options.get("workspace"),
        )
        self.stdout.write(connected_line(connection, "org"))
