"""manage.py rules: a dataset's own rules (docs/rules.md#a-teams-own-rules).

  rules add --dataset NAME --file RULES.yaml [--reason TEXT]   a new policy version
  rules preview --dataset NAME --file RULES.yaml [--format json]   nothing saved
  rules list --dataset NAME [--format json]
  rules remove --dataset NAME --id ID [--reason TEXT]

Workspace rule sets (docs/rules.md#workspace-rule-sets), team rules many datasets use:

  rules set-add --set NAME --file RULES.yaml [--reason TEXT]   a new version of the set
  rules use --dataset NAME --set NAME / rules unuse --dataset NAME --set NAME
  rules sets [--format json]

The same code as the API and the dataset page (reviews.orchestration.dataset.team_rules).
Exit codes: 0 done, 2 bad input (every problem of a rule file listed, one a line)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from reviews.cli import reader_may_leave
from reviews.engine.history.policy import PolicyError
from reviews.engine.ingest import IngestError
from reviews.engine.team_rules.rulefile import MAX_BYTES, RuleFileError, TeamRule, load
from reviews.management.commands.dismiss import _user
from reviews.models import Batch, Dataset
from reviews.orchestration.dataset import policies, rule_sets, team_rules
from reviews.orchestration.dataset.names import dataset_name, dataset_named
from workspaces.cli import HELP as workspace_help
from workspaces.cli import workspace_named

EXIT_BAD_INPUT = 2


class Command(BaseCommand):
    help = "A dataset's own rules: add, preview, list or remove them."

    def add_arguments(self, parser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        for name in ("add", "preview", "list", "remove", "use", "unuse", "set-add", "sets"):
            action = actions.add_parser(name)
            action.add_argument("--workspace", help=workspace_help)
            if name not in ("set-add", "sets"):
                action.add_argument("--dataset", required=True)
            if name in ("use", "unuse", "set-add"):
                action.add_argument("--set", required=True, dest="rule_set")
            if name in ("add", "preview", "set-add"):
                action.add_argument("--file", required=True, help="a rule file (YAML or JSON)")
            if name == "remove":
                action.add_argument("--id", required=True, dest="rule_id")
            if name in ("add", "remove", "use", "unuse", "set-add"):
                action.add_argument("--reason", default="", help="why (recorded)")
                action.add_argument("--user", help="the username recorded (default: login)")
            if name in ("preview", "list", "sets"):
                action.add_argument("--format", choices=("text", "json"), default="text")

    def handle(self, *args, action: str, **options) -> None:
        with reader_may_leave():  # `rules preview ... | head`
            self._handle(action, options)
            sys.stdout.flush()  # here, where a reader gone is caught, not at exit

    def _handle(self, action: str, options: dict) -> None:
        if action in ("set-add", "sets"):
            workspace = workspace_named(options.get("workspace"), returncode=EXIT_BAD_INPUT)
            try:
                self._sets(action, workspace.pk, options)
            except PolicyError as error:
                raise CommandError(str(error), returncode=EXIT_BAD_INPUT) from None
            return
        dataset = _dataset(options["dataset"], options.get("workspace"), make=action == "add")
        try:
            if action in ("use", "unuse"):
                change = rule_sets.use if action == "use" else rule_sets.stop_using
                version = change(
                    dataset,
                    options["rule_set"],
                    reason=options["reason"],
                    user=_user(options["user"]),
                )
                self.stdout.write(f"policy version {version.number}: {version.reason}")
                return
            if action == "add":
                rules = _read(options["file"])
                reason = options["reason"] or f"team rules added from {Path(options['file']).name}"
                added = team_rules.add(dataset, rules, reason=reason, user=_user(options["user"]))
                self.stdout.write(added.words())
            elif action == "remove":
                reason = options["reason"] or f"team rule {options['rule_id']} removed"
                version = team_rules.remove(
                    dataset, options["rule_id"], reason=reason, user=_user(options["user"])
                )
                self.stdout.write(f"policy version {version.number}: removed {options['rule_id']}")
            elif action == "list":
                self._list(dataset, options["format"])
            else:
                self._preview(
                    team_rules.preview(dataset, _read(options["file"])), options["format"]
                )
        except RuleFileError as error:
            raise CommandError(
                f"{options['file']} refused, nothing stored:\n" + "\n".join(error.problems),
                returncode=EXIT_BAD_INPUT,
            ) from None
        except PolicyError as error:
            raise CommandError(str(error), returncode=EXIT_BAD_INPUT) from None

    def _list(self, dataset: Dataset, form: str) -> None:
        _, policy = policies.current(dataset)
        if form == "json":
            data = {
                "rules": [r.as_data() for r in policy.team_rules],
                "rule_sets": [s.as_data() for s in policy.rule_sets],
            }
            self.stdout.write(json.dumps(data, indent=2, ensure_ascii=False))
            return
        for rule in policy.team_rules:
            self.stdout.write(f"{rule.id} ({rule.severity}, {rule.object}): {rule.when}")
        for shared in policy.rule_sets:
            for rule in shared.rules:
                self.stdout.write(
                    f"{rule.id} ({rule.severity}, {rule.object}, rule set {shared.name} "
                    f"version {shared.version}): {rule.when}"
                )
        if not policy.all_team_rules:
            self.stdout.write("no team rules")

    def _sets(self, action: str, workspace_id: int, options: dict) -> None:
        if action == "sets":
            found = rule_sets.sets_of(workspace_id)
            if options["format"] == "json":
                self.stdout.write(json.dumps({"rule_sets": found}, indent=2, ensure_ascii=False))
                return
            for item in found:
                used = ", ".join(item["datasets"]) or "no dataset"
                self.stdout.write(
                    f"{item['name']} version {item['version']}: {len(item['rules'])} rules, "
                    f"used by {used}"
                )
            if not found:
                self.stdout.write("no rule sets")
            return
        rules = _read(options["file"])
        version, made = rule_sets.save_set(
            workspace_id,
            options["rule_set"],
            rules,
            reason=options["reason"] or f"rules from {Path(options['file']).name}",
            user=_user(options["user"]),
        )
        datasets = ", ".join(v.dataset.name for v in made) or "no dataset uses it yet"
        self.stdout.write(f"rule set {version.name} version {version.number}: {datasets}")

    def _preview(self, result: dict, form: str) -> None:
        if form == "json":
            self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False))
            return
        for rule in result["rules"]:
            if rule["status"] != "ran":
                self.stdout.write(f"{rule['id']}: could not run: {rule['why']}")
                continue
            replay = ", ".join(str(r["count"]) for r in rule["replay"])
            records = "1 record" if rule["count"] == 1 else f"{rule['count']:,} records"
            self.stdout.write(
                f"{rule['id']}: {records} ({rule['already_flagged']:,} already flagged by a "
                f"built-in rule); over the stored syncs: {replay}"
            )
            for record in rule["records"]:
                self.stdout.write(f"  {record['id']}  {record['name'] or ''}")


def _dataset(name: str, workspace: str | None, *, make: bool = False) -> Dataset:
    """The workspace's dataset `name`. `make`: made if it has none yet, as its first sync
    would make it (rules may be written before the first sync)."""
    space = workspace_named(workspace, returncode=EXIT_BAD_INPUT)
    found = Dataset.objects.filter(workspace=space, name=name).first()
    if found is not None:
        return found
    if make:
        try:
            return dataset_named(space.pk, dataset_name(name) or "")
        except IngestError as error:
            raise CommandError("; ".join(error.errors), returncode=EXIT_BAD_INPUT) from None
    if Batch.objects.filter(workspace=space, requested_dataset=name).exists():
        raise CommandError(
            f"dataset {name!r} has no sync yet (none of its uploads has been accepted)",
            returncode=EXIT_BAD_INPUT,
        )
    raise CommandError(f"no dataset named {name!r}", returncode=EXIT_BAD_INPUT)


def _read(path: str) -> list[TeamRule]:
    try:
        if Path(path).stat().st_size > MAX_BYTES:  # refused before it is read
            raise CommandError(
                f"{path} refused, nothing stored: larger than {MAX_BYTES:,} bytes",
                returncode=EXIT_BAD_INPUT,
            )
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
