"""A dataset's deal pipelines: learned from a pipelines API response (uploaded beside a
sync or apart, through the dashboard, the API or the CLI), edited in admin, or set by
the HubSpot connector; used for every later sync of the dataset (docs/input.md)."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from reviews.engine import batch as plain
from reviews.engine.batch import Pipeline
from reviews.engine.ingest import IngestError
from reviews.engine.ingest.json_batch import dataset_name_problem, load_json
from reviews.engine.ingest.pipelines import (
    merge_pipelines,
    pipelines_from_data,
    pipelines_from_hubspot,
)
from reviews.engine.storable import storable_tree
from reviews.models import Batch, Dataset
from reviews.orchestration.dataset.names import dataset_named
from reviews.orchestration.store.parsed import known_pipelines


def store_pipelines(dataset: Dataset, pipelines: list[Pipeline], *, how: str) -> Dataset:
    """Remember `pipelines` on the dataset: each replaces the pipeline of its id, the
    others are kept. `how`: upload, api, cli, admin or connector."""
    with transaction.atomic():
        locked = Dataset.objects.select_for_update().get(pk=dataset.pk)
        # A NUL or lone surrogate in an id or label (a pipelines response sent as is)
        # is kept as its escape text, as in an upload: Postgres JSON cannot hold it.
        locked.pipelines, _ = storable_tree(merge_pipelines(locked.pipelines or [], pipelines))
        locked.pipelines_from = how
        locked.pipelines_updated_at = timezone.now()
        locked.save(update_fields=["pipelines", "pipelines_from", "pipelines_updated_at"])
    dataset.refresh_from_db(fields=["pipelines", "pipelines_from", "pipelines_updated_at"])
    return dataset


def store_pipelines_response(
    name: str, data: bytes, *, how: str, workspace_id: int, file_name: str = ""
) -> Dataset:
    """A `GET /crm/v3/pipelines/deals` response, as sent, stored on the dataset `name`
    of the workspace (created if new). Raises IngestError saying what is wrong."""
    problem = dataset_name_problem(name)
    if problem:
        raise IngestError([f"dataset: {problem}"])
    pipelines = pipelines_from_hubspot(load_json(data), name=file_name or "pipelines")
    if not pipelines:
        raise IngestError([f"{file_name or 'pipelines'}: the response lists no pipeline"])
    return store_pipelines(dataset_named(workspace_id, name.strip()), pipelines, how=how)


def validate_stored(stored: object) -> list[str]:
    """The errors of an edited pipelines value (admin), or []."""
    try:
        pipelines_from_data(stored or [])
    except IngestError as error:
        return error.errors
    return []


def learn_pipelines(batch: Batch, parsed: plain.Batch) -> None:
    """A dataset batch: the dataset learns the pipelines the upload defines (a pipelines
    API response beside the sync), and the batch is read with all the dataset knows,
    kept on the batch so every later read of it agrees."""
    dataset = batch.dataset
    if parsed.uploaded_pipelines:
        store_pipelines(dataset, parsed.uploaded_pipelines, how="upload")
    batch.pipelines = dataset.pipelines or []
    if batch.pipelines:
        parsed.use_pipelines(known_pipelines(batch.pipelines))
