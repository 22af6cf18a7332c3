"""A dataset found by its name, always within one workspace: names are unique per
workspace only (two teams may both sync "hubspot"), so a name alone finds none."""

from __future__ import annotations

from reviews.engine.ingest import IngestError
from reviews.engine.ingest.json_batch import dataset_name_problem
from reviews.models import Dataset


def dataset_name(name: str | None) -> str | None:
    """A dataset name given beside an upload (the form's field, the API's, the CLI's
    --dataset), checked as the JSON key is: None if none was given; raises IngestError
    naming the problem."""
    if name is None or not name.strip():
        return None
    problem = dataset_name_problem(name)
    if problem:
        raise IngestError([f"dataset: {problem}"])
    return name.strip()


def dataset_named(workspace_id: int, name: str) -> Dataset:
    """The workspace's dataset of this (checked) name, made at its first sync: the one
    way an upload finds its dataset, whichever door it came in by."""
    dataset, _ = Dataset.objects.get_or_create(workspace_id=workspace_id, name=name)
    return dataset
