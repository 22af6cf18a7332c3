"""manage.py dismiss --dataset NAME FINGERPRINT --reason TEXT [--undo]: tell revreview a
problem is not one (later reviews of the dataset list it as suppressed), or take that
back. The same code as the dashboard's Dismiss button (reviews.orchestration.dataset.dismissals).

Exit codes: 0 done, 2 bad input (unknown dataset or fingerprint, no reason)."""

from __future__ import annotations

import getpass

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from reviews.models import Dataset, Dismissal
from reviews.orchestration.dataset.dismissals import DismissalError, dismiss, undo_dismissal
from workspaces.cli import HELP as workspace_help
from workspaces.cli import workspace_named

EXIT_BAD_INPUT = 2


class Command(BaseCommand):
    help = "Dismiss a finding's fingerprint for a dataset (or --undo a dismissal)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("fingerprint", help="the finding's fingerprint (16 hex digits)")
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--reason", help="why this is not a problem (required to dismiss)")
        parser.add_argument("--undo", action="store_true", help="take the dismissal back")
        parser.add_argument("--workspace", help=workspace_help)
        parser.add_argument(
            "--user", help="the username recorded with it (default: the login name, if a user)"
        )

    def handle(self, *args, fingerprint: str, dataset: str, **options) -> None:
        workspace = workspace_named(options.get("workspace"), returncode=EXIT_BAD_INPUT)
        found = Dataset.objects.filter(workspace=workspace, name=dataset).first()
        if found is None:
            raise CommandError(
                f"no dataset named {dataset!r} in workspace {workspace}", returncode=EXIT_BAD_INPUT
            )
        user = _user(options["user"])
        try:
            if options["undo"]:
                dismissal = undo_dismissal(found, fingerprint, user=user)
                self.stdout.write(f"undone: {dismissal.fingerprint} ({dismissal.title})")
            else:
                dismissal = dismiss(
                    found,
                    fingerprint,
                    reason=options["reason"] or "",
                    user=user,
                    via=Dismissal.Via.CLI,
                )
                self.stdout.write(
                    f"dismissed: {dismissal.fingerprint} ({dismissal.title}): {dismissal.reason}"
                )
        except DismissalError as error:
            raise CommandError(str(error), returncode=EXIT_BAD_INPUT) from None


def _user(username: str | None):
    name = username or getpass.getuser()
    user = get_user_model().objects.filter(username=name).first()
    if username and user is None:
        raise CommandError(f"no user named {username!r}", returncode=EXIT_BAD_INPUT)
    return user
