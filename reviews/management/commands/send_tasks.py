"""manage.py send_tasks --run ID --user NAME [--owner O] [--fingerprint FP ...]
[--due YYYY-MM-DD] [--apply]: show (the default: a dry run) or send a run's to-do list,
or the part of it asked for, to HubSpot as tasks, one per finding, on the record to fix
(docs/output.md#sending-the-to-do-list-as-hubspot-tasks). A finding gets one task,
whatever is run again. Needs a staff user and the dataset's HubSpot connection to
--apply.

Exit codes: 0 every task would go / went through (or was sent before), 1 one failed,
was refused before or went unanswered, 2 bad input (no such run or user, not staff, no
token, an unknown fingerprint, a bad date)."""

from __future__ import annotations

from datetime import date

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from connectors.merges import MergeNotAllowed, configured_client
from connectors.owner_tasks import dry_run_tasks, send_tasks
from reviews.models import ReviewRun
from reviews.orchestration.fixes.fixplan import PlanUnavailable

EXIT_SOME_FAILED = 1
EXIT_BAD_INPUT = 2
GOOD = {"would create", "created"}


class Command(BaseCommand):
    help = "Dry-run (default) or send a run's to-do list to HubSpot as tasks."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--run", type=int, required=True)
        parser.add_argument("--user", required=True, help="the staff member approving")
        parser.add_argument("--owner", help="only this owner's tasks ('' for the unowned)")
        parser.add_argument("--fingerprint", action="append", help="only this finding")
        parser.add_argument("--due", help="the tasks' due date, YYYY-MM-DD (default: in 7 days)")
        parser.add_argument("--apply", action="store_true", help="create the tasks in HubSpot")

    def handle(self, *args, run: int, user: str, owner, fingerprint, due, apply, **options):
        found = ReviewRun.objects.select_related("batch__dataset").filter(pk=run).first()
        if found is None:
            raise CommandError(f"no run {run}", returncode=EXIT_BAD_INPUT)
        person = get_user_model().objects.filter(username=user).first()
        if person is None:
            raise CommandError(f"no user named {user!r}", returncode=EXIT_BAD_INPUT)
        try:
            due_date = date.fromisoformat(due) if due else None
        except ValueError:
            message = f"--due {due!r}: not a YYYY-MM-DD date"
            raise CommandError(message, returncode=EXIT_BAD_INPUT) from None
        try:
            if apply:
                client = configured_client(found.batch.dataset)
                if client is None:
                    raise MergeNotAllowed(
                        "the run's dataset has no HubSpot connection: manage.py hubspot_connect"
                    )
                try:
                    steps = send_tasks(
                        found, fingerprint, owner=owner, user=person, client=client, due=due_date
                    )
                finally:
                    client.close()
            else:
                steps = dry_run_tasks(found, fingerprint, owner=owner, user=person, due=due_date)
        except (MergeNotAllowed, PlanUnavailable) as error:
            raise CommandError(str(error), returncode=EXIT_BAD_INPUT) from None
        for step in steps:
            owner_text = f"owner {step.owner_id}" if step.owner_id else "unassigned"
            made = f" (task {step.task_id})" if step.task_id else ""
            notes = "".join(f" [{note}]" for note in (step.detail, step.resolved) if note)
            self.stdout.write(
                f"{step.object_type} {step.record_id}: {step.outcome}{made}{notes}: "
                f"{step.subject} ({owner_text}, due {step.due})"
            )
        if not steps:
            self.stdout.write(f"run {run}'s to-do list has no tasks to send")
        if any(step.outcome not in GOOD for step in steps):
            raise CommandError("not every task went through", returncode=EXIT_SOME_FAILED)
