"""manage.py hubspot_pull --dataset NAME [--workspace NAME] [--full] [--format json|text]:
pull the dataset's portal now (without --workspace: the one connected dataset of that name;
several workspaces have one: exit 2 naming them), review the snapshot in this process,
and print the run report exactly as `manage.py review` does, with its exit codes:
0 approve / approve_with_comments, 1 request_changes, 2 bad input or a refused request
(no connection, a pull already running, a snapshot the reader refused), 3 not reviewed
(the pull failed: its reason on stderr; or the run failed)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from connectors import registry
from connectors.models import Connection
from connectors.pulls import AlreadyPulling, execute_pull, request_pull
from reviews.cli import (
    EXIT_BAD_INPUT,
    EXIT_NOT_REVIEWED,
    bad_input,
    report_and_exit,
    run_in_process,
)
from workspaces.cli import HELP as workspace_help
from workspaces.cli import workspace_holding
from workspaces.models import Workspace


class Command(BaseCommand):
    help = "Pull a connected HubSpot portal now, review it and print the verdict."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--workspace", help=workspace_help)
        parser.add_argument("--full", action="store_true", help="a full pull, not incremental")
        parser.add_argument("--format", choices=("json", "text"), default="text")

    def handle(self, *args, dataset: str, full: bool, format: str, **options) -> None:
        connections = Connection.objects.select_related("dataset").filter(dataset__name=dataset)
        workspace = workspace_holding(
            options.get("workspace"),
            Workspace.objects.filter(pk__in=connections.values("dataset__workspace")),
            f"connected dataset {dataset!r}",
            returncode=EXIT_BAD_INPUT,
        )
        connection = connections.filter(dataset__workspace=workspace).first()
        if connection is None:
            raise CommandError(
                f"dataset {dataset!r} of workspace {workspace.name!r} has no "
                f"{registry.labels()} connection: run hubspot_connect or salesforce_connect first",
                returncode=EXIT_BAD_INPUT,
            )
        try:
            pull = request_pull(connection, full=full, by="cli")
        except AlreadyPulling as error:
            raise CommandError(str(error), returncode=EXIT_BAD_INPUT) from None
        pull, submission = execute_pull(pull.pk, dispatch=False)
        if pull is None:
            raise CommandError("the pull was taken by a worker", returncode=EXIT_BAD_INPUT)
        if submission is None:
            raise CommandError(f"pull {pull.pk} failed: {pull.error}", returncode=EXIT_NOT_REVIEWED)
        if not submission.accepted:
            bad_input(self.stdout, self.stderr, format, submission.errors, submission.batch)
        self.stderr.write(
            f"pull {pull.pk} ({pull.kind}): {pull.records:,} records, {pull.changed:,} fetched, "
            f"{pull.removed:,} removed, {pull.requests:,} requests in "
            f"{pull.duration_seconds or 0:.1f} s ({pull.waited_seconds:.1f} s waiting on limits)"
        )
        run = submission.run
        if not run.is_finished:
            run = run_in_process(run)
        report_and_exit(self.stdout, run, format)
