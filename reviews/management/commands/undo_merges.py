"""manage.py undo_merges --run ID --user NAME [--fingerprint FP ...] [--apply]: show
(the default: a dry run) or undo a run's applied merges in HubSpot
(docs/output.md#undoing-a-merge): each merged-away record made again from the snapshot
taken before its merge, with a new id, at most once whatever is run again. An undo
HubSpot refused is asked again only with its --fingerprint. Needs a staff user and the
dataset's HubSpot connection to --apply.

Exit codes: 0 every undo would go / went through, 1 one failed, went unanswered or has
no snapshot, 2 bad input (no such run or user, not staff, no token, an unknown
fingerprint)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from connectors.undo import undo_dry_run, undo_merges
from connectors.write_access import MergeNotAllowed
from reviews.management.crm_writes import (
    EXIT_BAD_INPUT,
    EXIT_SOME_FAILED,
    crm_client,
    run_and_person,
)

GOOD = {"would undo", "undone"}


class Command(BaseCommand):
    help = "Dry-run (default) or undo a run's applied merges in HubSpot."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--run", type=int, required=True)
        parser.add_argument("--user", required=True, help="the staff member asking")
        parser.add_argument(
            "--fingerprint", action="append", help="only this merge (repeat for more)"
        )
        parser.add_argument(
            "--apply", action="store_true", help="make the merged records again in HubSpot"
        )

    def handle(self, *args, run: int, user: str, fingerprint, apply: bool, **options) -> None:
        found, person = run_and_person(run, user)
        try:
            if apply:
                with crm_client(found) as client:
                    steps = undo_merges(found, fingerprint, user=person, client=client)
            else:
                steps = undo_dry_run(found, fingerprint, user=person)
        except MergeNotAllowed as error:
            raise CommandError(str(error), returncode=EXIT_BAD_INPUT) from None
        for step in steps:
            now = f" (now {step.restored_id})" if step.restored_id else ""
            detail = f" [{step.detail}]" if step.detail else ""
            self.stdout.write(
                f"{step.object_type} {step.merged_id} (merged into {step.survivor_id}){now}: "
                f"{step.outcome}{detail}; restores {step.restores or 'nothing'}; "
                f"cannot bring back: {step.cannot}"
            )
        if not steps:
            self.stdout.write(f"run {run} has no applied merges to undo")
        if any(step.outcome not in GOOD for step in steps):
            raise CommandError("not every undo went through", returncode=EXIT_SOME_FAILED)
