"""manage.py load_samples: queue a review of every sample batch not loaded yet, and
each dataset's syncs under samples/syncs/<dataset>/<sync>/ in order, into that dataset."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from reviews.cli import run_in_process
from reviews.engine.ingest import UploadedFile
from reviews.models import Batch, ReviewRun
from reviews.orchestration.intake.submit import stored_sha256, submit

SAMPLES_DIR = settings.BASE_DIR / "samples"


def sample_uploads(directory: Path = SAMPLES_DIR) -> list[list[UploadedFile]]:
    """Each JSON sample on its own; each folder of CSV exports as one upload."""
    uploads = [
        [_upload(p)]
        for p in sorted(directory.glob("*.json"))
        if not p.name.endswith(".truth.json") and p.name != "broken.json"
    ]
    for folder in sorted(p for p in directory.iterdir() if p.is_dir()):
        csvs = sorted(folder.glob("*.csv"))
        if csvs:
            uploads.append([_upload(p) for p in csvs])
    return uploads


def sample_syncs(directory: Path = SAMPLES_DIR / "syncs") -> list[tuple[str, list[UploadedFile]]]:
    """(dataset, files) for each sync folder, a dataset's syncs oldest first (their
    folders are named by date), so history, standing problems and owners show at once."""
    syncs = []
    for dataset in sorted(p for p in directory.iterdir() if p.is_dir()):
        for sync in sorted(p for p in dataset.iterdir() if p.is_dir()):
            files = sorted(p for p in sync.iterdir() if p.suffix in (".csv", ".xlsx", ".json"))
            syncs.append((dataset.name, [_upload(p) for p in files]))
    return syncs


def _upload(path: Path) -> UploadedFile:
    return UploadedFile(name=path.name, data=path.read_bytes())


class Command(BaseCommand):
    help = "Queue a review of each sample and each sync in samples/ not loaded yet."

    def handle(self, *args, **options) -> None:
        uploads = [(None, files) for files in sample_uploads()] + sample_syncs()
        for dataset, files in uploads:
            name = ", ".join(f.name for f in files) + (f" (dataset {dataset})" if dataset else "")
            if Batch.objects.filter(sha256=stored_sha256(files)).exists():
                self.stdout.write(f"already loaded: {name}")
                continue
            # A dataset's syncs are reviewed here, one after the other: each compares
            # with the one before, which a worker taking both at once could not promise.
            submission = submit(files, dataset=dataset, dispatch=dataset is None)
            if not submission.accepted:
                self.stdout.write(f"rejected: {name}: {submission.errors[:3]}")
            elif dataset is None:
                self.stdout.write(f"queued: {name} (run {submission.run.pk})")
            else:
                if submission.run.status == ReviewRun.Status.QUEUED:
                    run_in_process(submission.run)
                self.stdout.write(f"reviewed: {name} (run {submission.run.pk})")
