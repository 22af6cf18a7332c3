"""manage.py load_samples: queue a review of every sample batch not loaded yet."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from reviews.engine.ingest import UploadedFile
from reviews.models import Batch
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


def _upload(path: Path) -> UploadedFile:
    return UploadedFile(name=path.name, data=path.read_bytes())


class Command(BaseCommand):
    help = "Queue a review of each sample in samples/ that is not loaded yet."

    def handle(self, *args, **options) -> None:
        for files in sample_uploads():
            name = ", ".join(f.name for f in files)
            if Batch.objects.filter(sha256=stored_sha256(files)).exists():
                self.stdout.write(f"already loaded: {name}")
                continue
            submission = submit(files)
            if submission.accepted:
                self.stdout.write(f"queued: {name} (run {submission.run.pk})")
            else:
                self.stdout.write(f"rejected: {name}: {submission.errors[:3]}")
