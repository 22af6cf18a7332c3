"""An upload's dataset is looked up within the upload's workspace, on every door and
whether the web parses it or a worker does: a name two teams share never mixes them,
and a new name is made in the team's own workspace, never in the default one."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from reviews.models import Batch, Dataset
from tests.uploads import upload
from tests.workspaces.conftest import A_DATASET, reviewed_in
from workspaces.models import default_workspace

pytestmark = [pytest.mark.django_db, pytest.mark.own_workspaces]

NEW_NAME = "gamma-crm-4410"


@pytest.fixture
def big(settings):
    """Every upload is big: stored by the web, read by a worker (eager here)."""
    settings.PARSE_IN_WEB_MAX_BYTES = 100


def _upload_page(world, dataset: str, django_capture_on_commit_callbacks):
    client = world.client("bob")
    form = {"files": [SimpleUploadedFile("seed.json", upload("seed-example.json").data)]}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/", {**form, "dataset": dataset})
    assert response.status_code == 302, response.content.decode()[:2000]
    return Batch.objects.get(pk=int(response["Location"].strip("/").split("/")[-1]))


def _api(world, dataset: str, django_capture_on_commit_callbacks):
    headers = {"Authorization": f"Bearer {world.secrets['bob']}"}
    with django_capture_on_commit_callbacks(execute=True):
        response = world.client("anon").post(
            f"/api/v1/batches?dataset={dataset}",
            upload("seed-example.json").data,
            content_type="application/json",
            headers=headers,
        )
    assert response.status_code == 202, response.content.decode()[:2000]
    return Batch.objects.get(pk=response.json()["batch_id"])


DOORS = {"upload page": _upload_page, "api": _api}


@pytest.mark.parametrize("door", DOORS)
def test_a_big_upload_to_a_name_two_workspaces_share_goes_to_its_own(
    world, big, door, django_capture_on_commit_callbacks
):
    theirs = reviewed_in(world.b, A_DATASET).batch.dataset  # A and B both have the name

    batch = DOORS[door](world, A_DATASET, django_capture_on_commit_callbacks)

    batch.refresh_from_db()
    assert (batch.workspace, batch.status) == (world.b, Batch.Status.ACCEPTED)
    assert batch.dataset == theirs
    assert batch.runs.count() == 1


@pytest.mark.parametrize("door", DOORS)
def test_a_big_upload_to_a_new_name_makes_it_in_its_own_workspace_only(
    world, big, door, django_capture_on_commit_callbacks
):
    batch = DOORS[door](world, NEW_NAME, django_capture_on_commit_callbacks)

    batch.refresh_from_db()
    made = Dataset.objects.filter(name=NEW_NAME)
    assert [d.workspace for d in made] == [world.b]
    assert batch.dataset == made.get()
    assert not Dataset.objects.filter(workspace=default_workspace()).exists()
