"""manage.py rules: a dataset's own rules (docs/rules.md#a-teams-own-rules).

  rules add --dataset NAME --file RULES.yaml [--reason TEXT]   a new policy version
  rules preview --dataset NAME --file RULES.yaml [--format json]   nothing saved
  rules list --dataset NAME [--format json]
  rules remove --dataset NAME --id ID [--reason TEXT]

The same code as the API and the dataset page (reviews.orchestration.dataset.team_rules).
Exit codes: 0 done, 2 bad input (every problem of a rule file listed, one a line)."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from reviews.engine.history.policy import PolicyError
from reviews.engine.team_rules.rulefile import RuleFileError, TeamRule, load
from reviews.management.commands.dismiss import _user
from reviews.models import Dataset
from reviews.orchestration.dataset import team_rules
from workspaces.cli import HELP as workspace_help
from workspaces.cli import workspace_named

EXIT_BAD_INPUT = 2


class Command(BaseCommand):
    help = "A dataset's own rules: add, preview, list or remove them."

    def add_arguments(self, parser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        for name in ("add", "preview", "list", "remove"):
            action = actions.add_parser(name)
            action.add_argument("--dataset", required=True)
            action.add_argument("--workspace", help=workspace_help)
            if name in ("add", "preview"):
                action.add_argument("--file", required=True, help="a rule file (YAML or JSON)")
            if name == "remove":
                action.add_argument("--id", required=True, dest="rule_id")
            if name in ("add", "remove"):
                action.add_argument("--reason", default="", help="why (recorded)")
                action.add_argument("--user", help="the username recorded (default: login)")
            if name in ("preview", "list"):
                action.add_argument("--format", choices=("text", "json"), default="text")

    def handle(self, *args, action: str, **options) -> None:
        dataset = _dataset(options["dataset"], options.get("workspace"))
        try:
            if action == "add":
                rules = _read(options["file"])
                reason = options["reason"] or f"team rules added from {Path(options['file']).name}"
                version = team_rules.add(dataset, rules, reason=reason, user=_user(options["user"]))
                ids = ", ".join(rule.id for rule in rules)
                self.stdout.write(f"policy version {version.number}: added {ids}")
            elif action == "remove":
                reason = options["reason"] or f"team rule {options['rule_id']} removed"
                version = team_rules.remove(
                    dataset, options["rule_id"], reason=reason, user=_user(options["user"])
                )
                self.stdout.write(f"policy version {version.number}: removed {options['rule_id']}")
            elif action == "list":
                self._list(team_rules.rules_of(dataset), options["format"])
            else:
                self._preview(
                    team_rules.preview(dataset, _read(options["file"])), options["format"]
                )
        except PolicyError as error:
            raise CommandError(str(error), returncode=EXIT_BAD_INPUT) from None

    def _list(self, rules: list[TeamRule], form: str) -> None:
        if form == "json":
            self.stdout.write(json.dumps({"rules": [r.as_data() for r in rules]}, indent=2))
            return
        for rule in rules:
            self.stdout.write(f"{rule.id} ({rule.severity}, {rule.object}): {rule.when}")
        if not rules:
            self.stdout.write("no team rules")

    def _preview(self, result: dict, form: str) -> None:
        if form == "json":
            self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False))
            return
        for rule in result["rules"]:
            if rule["status"] != "ran":
                self.stdout.write(f"{rule['id']}: could not run: {rule['why']}")
                continue
            replay = ", ".join(str(r["count"]) for r in rule["replay"])
            self.stdout.write(
                f"{rule['id']}: {rule['count']:,} records ({rule['already_flagged']:,} already "
                f"flagged by a built-in rule); over the stored syncs: {replay}"
            )
            for record in rule["records"]:
                self.stdout.write(f"  {record['id']}  {record['name'] or ''}")


def _dataset(name: str, workspace: str | None) -> Dataset:
    found = Dataset.objects.filter(
        workspace=workspace_named(workspace, returncode=EXIT_BAD_INPUT), name=name
    ).first()
    if found is None:
        raise CommandError(f"no dataset named {name!r}", returncode=EXIT_BAD_INPUT)
    return found


def _read(path: str) -> list[TeamRule]:
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise CommandError(f"{path}: {error.strerror}", returncode=EXIT_BAD_INPUT) from None
    try:
        return load(data)
    except RuleFileError as error:
        raise CommandError(
            f"{path} refused, nothing stored:\n" + "\n".join(error.problems),
            returncode=EXIT_BAD_INPUT,
        ) from None
