"""manage.py send_tasks --run ID --user NAME [--owner NAME] [--apply]: show (the default:
a dry run) or send a run's to-do list to the records' owners, as HubSpot or Salesforce
tasks (docs/output.md#tasks-for-the-owners). Each finding is sent at most once per dataset,
whatever is run again; every answer is recorded as a SentTask. Needs a staff user and the
dataset's HubSpot or Salesforce connection to --apply.

Exit codes: 0 every task would go / went through (or is resolved), 1 one failed or went
unanswered, 2 bad input (no such run or user, not staff, no connection)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from connectors.owner_tasks import dry_run, send_tasks
from connectors.write_access import MergeNotAllowed
from reviews.management.crm_writes import (
    EXIT_BAD_INPUT,
    EXIT_SOME_FAILED,
    crm_client,
    run_and_person,
)
from reviews.orchestration.fixes.fixplan import PlanUnavailable

GOOD = {"would create", "created", "resolved"}


class Command(BaseCommand):
    help = (
        "Dry-run (default) or send a run's to-do list to the owners as tasks in the "
        "dataset's CRM (HubSpot or Salesforce)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--run", type=int, required=True)
        parser.add_argument("--user", required=True, help="the staff member approving")
        parser.add_argument("--owner", help="only this owner's tasks ('' for the unowned)")
        parser.add_argument(
            "--apply",
            action="store_true",
            help="create the tasks in the dataset's CRM (HubSpot or Salesforce)",
        )

    def handle(self, *args, run: int, user: str, owner, apply: bool, **options) -> None:
        found, person = run_and_person(run, user)
        try:
            if apply:
                with crm_client(found) as client:
                    steps = send_tasks(found, owner, user=person, client=client)
            else:
                steps = dry_run(found, owner, user=person)
        except (MergeNotAllowed, PlanUnavailable) as error:
            raise CommandError(str(error), returncode=EXIT_BAD_INPUT) from None
        for step in steps:
            task = step.task
            made = f" {step.task_id}" if step.task_id else ""
            resolved = f" (resolved in run {step.resolved_in})" if step.resolved_in else ""
            detail = f" [{step.detail}]" if step.detail else ""
            self.stdout.write(
                f"{task.object} {task.record_id} ({task.owner or 'no owner'}): {step.outcome}"
                f"{made}{resolved}{detail}: {task.problem}"
            )
        if any(step.outcome not in GOOD for step in steps):
            raise CommandError("not every task went through", returncode=EXIT_SOME_FAILED)
