"""manage.py tune --dataset NAME [--format json]: the dataset's tuning proposals, each
with its replay over the stored syncs, and the root causes of recurring problems
(docs/history.md).

manage.py tune --dataset NAME --apply ID --reason TEXT: apply a proposal (a new policy
version; the next sync uses it). manage.py tune --dataset NAME --revert VERSION
[--reason TEXT]: restore policy version VERSION (0: the engine's rules as set) as a new
version. The same code as the dataset page (reviews.orchestration.dataset.policies).

Exit codes: 0 done, 2 bad input (unknown dataset or proposal, no reason)."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from reviews.engine.history.policy import PolicyError
from reviews.management.commands.dismiss import _user
from reviews.models import Dataset
from reviews.orchestration.dataset import policies
from workspaces.cli import HELP as workspace_help
from workspaces.cli import workspace_named

EXIT_BAD_INPUT = 2


class Command(BaseCommand):
    help = "Tuning proposals and root causes for a dataset; --apply or --revert a policy."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--format", choices=("text", "json"), default="text")
        parser.add_argument("--apply", metavar="ID", help="apply the proposal with this id")
        parser.add_argument("--revert", metavar="VERSION", type=int, help="restore this version")
        parser.add_argument("--reason", help="why (required with --apply)")
        parser.add_argument("--user", help="the username recorded (default: the login name)")
        parser.add_argument("--workspace", help=workspace_help)

    def handle(self, *args, dataset: str, **options) -> None:
        workspace = workspace_named(options.get("workspace"), returncode=EXIT_BAD_INPUT)
        found = Dataset.objects.filter(workspace=workspace, name=dataset).first()
        if found is None:
            raise CommandError(
                f"no dataset named {dataset!r} in workspace {workspace}", returncode=EXIT_BAD_INPUT
            )
        user = _user(options["user"])
        try:
            if options["apply"]:
                version = policies.apply_proposal(
                    found, options["apply"], reason=options["reason"] or "", user=user
                )
                self.stdout.write(f"policy version {version.number}: {version.policy}")
                return
            if options["revert"] is not None:
                version = policies.restore(
                    found, options["revert"], reason=options["reason"] or "", user=user
                )
                self.stdout.write(f"policy version {version.number}: {version.policy}")
                return
        except PolicyError as error:
            raise CommandError(str(error), returncode=EXIT_BAD_INPUT) from None
        result = policies.tune_dataset(found)
        result.pop("_objects")
        if options["format"] == "json":
            self.stdout.write(json.dumps(result, indent=2, default=str))
            return
        for proposal in result["proposals"]:
            replay = proposal["replay"]
            self.stdout.write(
                f"{proposal['id']}: {proposal['why']}\n  replay over {replay['syncs']} syncs: "
                f"hides {replay['dismissed_hidden']} of {replay['dismissed_total']} dismissed, "
                f"{replay['kept_hidden']} of {replay['kept_total']} kept; adds {replay['added']}"
            )
        for cause in result["root_causes"]:
            self.stdout.write(f"{cause['text']}: {cause['advice']}")
        if not result["proposals"] and not result["root_causes"]:
            self.stdout.write("no proposals, no recurring root causes")
