"""Helpers for the dashboard tests: real runs through the real submit path."""

from __future__ import annotations

import pytest

from reviews.engine.ingest import UploadedFile
from reviews.models import ReviewRun
from reviews.orchestration.intake.submit import submit
from reviews.orchestration.run.tasks import start_review
from tests.uploads import upload


def reviewed(files: list[UploadedFile] | None = None) -> ReviewRun:
    """A finished run: submitted, then reviewed in-process (tasks are eager in tests)."""
    submission = submit(files or [upload("seed-example.json")], dispatch=False, no_cache=True)
    start_review.apply(kwargs={"run_id": submission.run.pk})
    submission.run.refresh_from_db()
    return submission.run


def queued(files: list[UploadedFile] | None = None) -> ReviewRun:
    """A run that no worker has picked up yet."""
    return submit(files or [upload("seed-example.json")], dispatch=False, no_cache=True).run


@pytest.fixture
def member(django_user_model):
    return django_user_model.objects.create_user("member", password="member-pass-1")


@pytest.fixture
def member_client(client, member):
    client.force_login(member)
    return client
