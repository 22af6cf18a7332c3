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
from django.db import transaction

from connectors import registry
from connectors.base import ConnectorError
from connectors.pulls import ConnectRefused, connect
from reviews.models import Dataset
from reviews.orchestration.intake.submit import dataset_name
from workspaces.cli import HELP as workspace_help
from workspaces.cli import workspace_holding
from workspaces.models import Workspace

EXIT_REFUSED = 2


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
        try:
            name = dataset_name(dataset)
            credentials = registry.credentials_from("salesforce", given)
        except ConnectorError as error:
            raise CommandError(error.message, returncode=EXIT_REFUSED) from None
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
            connection = connect(target, credentials, provider="salesforce", every_hours=every)
        except ConnectRefused as error:
            raise CommandError(str(error), returncode=EXIT_REFUSED) from None
        self.stdout.write(
            f"dataset {target.name} connected to {connection.provider_label} org "
            f"{connection.portal_id} "
            f"({connection.company_currency or '-'}, {connection.time_zone or '-'}); "
            f"pulled every {connection.every_hours} h, the first pull is due now"
        )
