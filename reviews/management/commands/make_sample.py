"""manage.py make_sample --records N --seed S [--out PATH]: a generated batch and its truth."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from reviews.engine.rules import DEFAULT_RULES
from reviews.samplegen import write_sample
from reviews.samplegen.sync import write_syncs


class Command(BaseCommand):
    help = "Generate a realistic sample batch with planted defects and a ground-truth file."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--records", type=int, required=True)
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument(
            "--out", type=Path, help="batch path (default: samples/generated/N-S.json)"
        )
        parser.add_argument(
            "--syncs",
            type=int,
            default=1,
            help="write this many consecutive syncs of one dataset (x.json, x.sync2.json, "
            "...), each truth listing every problem's status and those resolved",
        )

        parser.add_argument(
            "--stale-share",
            type=float,
            default=0.0,
            help="share (0-1) of background companies with enrichment older than the default "
            f"stale_enrichment_days ({DEFAULT_RULES.stale_enrichment_days})",
        )

    def handle(
        self,
        *args,
        records: int,
        seed: int,
        out: Path | None,
        syncs: int,
        stale_share: float,
        **options,
    ) -> None:
        if records < 1:
            raise CommandError("--records must be at least 1")
        if syncs < 1:
            raise CommandError("--syncs must be at least 1")
        if not 0 <= stale_share <= 1:
            raise CommandError("--stale-share must be between 0 and 1")
        if syncs > 1 and stale_share:
            raise CommandError("--stale-share makes one batch; leave it out with --syncs")
        out = out or settings.BASE_DIR / "samples" / "generated" / f"{records}-{seed}.json"
        if syncs == 1:
            written = [write_sample(out, records, seed, stale_share=stale_share)]
        else:
            written = write_syncs(out, records, seed, syncs)
        for batch_path, truth_path in written:
            self.stdout.write(f"batch: {batch_path}")
            self.stdout.write(f"truth: {truth_path}")
