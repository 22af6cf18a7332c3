"""manage.py apply_merges --run ID --user NAME [--fingerprint FP ...] [--apply]: show
(the default: a dry run) or send a run's merges to HubSpot (docs/output.md#applying-
merges). Each record is merged at most once, whatever is run again; every answer is
recorded as an AppliedMerge. Needs a staff user and the dataset's HubSpot connection to --apply.

Exit codes: 0 every merge would go / went through, 1 one failed or went unanswered,
2 bad input (no such run or user, not staff, no token, an unknown fingerprint)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from connectors.merge_steps import dry_run
from connectors.merges import apply_merges
from connectors.write_access import MergeNotAllowed, configured_client
from reviews.management.crm_writes import (
    EXIT_BAD_INPUT,
    EXIT_SOME_FAILED,
    crm_client,
    run_and_person,
)
from reviews.orchestration.fixes.fixplan import PlanUnavailable

GOOD = {"would merge", "merged"}


class Command(BaseCommand):
    help = "Dry-run (default) or apply a run's merge plan in HubSpot."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--run", type=int, required=True)
        parser.add_argument("--user", required=True, help="the staff member asking")
        parser.add_argument(
            "--fingerprint", action="append", help="only this merge (repeat for more)"
        )
        parser.add_argument(
            "--apply", action="store_true", help="send the merges (undo: manage.py undo_merges)"
        )

    def handle(self, *args, run: int, user: str, fingerprint, apply: bool, **options) -> None:
        found, person = run_and_person(run, user)
        try:
            if apply:
                with crm_client(found) as client:
                    steps = apply_merges(found, fingerprint, user=person, client=client)
            else:
                # The pre-flight reads both records of each merge when the dataset is
                # connected: what the survivor would lose, property by property.
                client = configured_client(found.batch.dataset)
                try:
                    steps = dry_run(found, fingerprint, user=person, client=client)
                finally:
                    if client is not None:
                        client.close()
        except (MergeNotAllowed, PlanUnavailable) as error:
            raise CommandError(str(error), returncode=EXIT_BAD_INPUT) from None
        for step in steps:
            detail = f" [{step.detail}]" if step.detail else ""
            now = (
                f" (now {step.survivor_id})"
                if step.survivor_id and step.survivor_id != step.primary_id
                else ""
            )
            self.stdout.write(
                f"{step.object_type} {step.merged_id} -> {step.primary_id}{now}: {step.outcome}"
                f"{detail} ({step.reason})"
            )
            for line in step.loses:
                self.stdout.write(f"  loses {line}")
            if step.read_error:
                self.stdout.write(f"  {step.read_error}")
        if any(step.outcome not in GOOD for step in steps):
            raise CommandError("not every merge went through", returncode=EXIT_SOME_FAILED)
