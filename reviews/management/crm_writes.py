"""What the commands that write to a dataset's CRM share (`apply_merges`, `undo_merges`,
`send_tasks`): the run and the person they name, and the dataset's connector for
`--apply`. Anything missing is bad input (exit 2), said in one line."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from connectors import registry
from connectors.base import Connector
from connectors.write_access import MergeNotAllowed, configured_client
from reviews.models import ReviewRun

EXIT_SOME_FAILED = 1  # a write was refused or went unanswered
EXIT_BAD_INPUT = 2


def run_and_person(run_id: int, username: str):
    """The run and the user a command names; CommandError (exit 2) for either missing."""
    run = ReviewRun.objects.select_related("batch__dataset").filter(pk=run_id).first()
    if run is None:
        raise CommandError(f"no run {run_id}", returncode=EXIT_BAD_INPUT)
    person = get_user_model().objects.filter(username=username).first()
    if person is None:
        raise CommandError(f"no user named {username!r}", returncode=EXIT_BAD_INPUT)
    return run, person


@contextmanager
def crm_client(run: ReviewRun) -> Iterator[Connector]:
    """The connector of the run's dataset's connection, closed after; MergeNotAllowed
    when the dataset has none."""
    client = configured_client(run.batch.dataset)
    if client is None:
        raise MergeNotAllowed(
            f"the run's dataset has no {registry.labels()} connection: manage.py "
            "hubspot_connect or salesforce_connect"
        )
    try:
        yield client
    finally:
        client.close()
