"""What dataset history adds to the review of a large batch: the detectors' findings of
a generated batch are fused, then fingerprinted and compared with a baseline holding
half of them (the work the coordinator adds per run), each step timed in-process.

    .venv/bin/python bench/history_overhead.py [--records 1000000]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "revreview.settings")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args(argv)

    import django

    django.setup()
    from datetime import UTC, datetime

    from django.conf import settings

    from reviews.engine import coordinator
    from reviews.engine.history import compare as history
    from reviews.engine.ingest import Limits, UploadedFile, parse_upload
    from reviews.engine.specialists import NAMES, detector
    from reviews.samplegen import generate

    batch, _ = generate(args.records, args.seed)
    data = json.dumps(batch).encode()
    del batch
    now = datetime.now(UTC)
    timings: dict[str, float] = {}

    def timed(step: str, work):
        began = time.perf_counter()
        result = work()
        timings[step] = round(time.perf_counter() - began, 3)
        return result

    parsed = timed(
        "parse",
        lambda: parse_upload(
            [UploadedFile("b.json", data)],
            as_of=None,
            received_at=now,
            limits=Limits(max_bytes=len(data) + 1, max_errors=100),
        ),
    )
    findings = timed(
        "detectors",
        lambda: [f for name in NAMES for f in detector(name)(parsed, settings.REVIEW_RULES)],
    )
    review = timed("fuse", lambda: coordinator.fuse(findings, parsed.counts, []))
    # A baseline with every other finding of this run, built as load_baseline builds it.
    pasts = (
        history.Past(history.fingerprint_of(f), now, f.category, f.kind, f.severity, f.title, ())
        for f in review.findings[::2]
    )
    baseline = history.Baseline(1, {past.fingerprint: past for past in pasts})
    plain = timed("history, no dataset", lambda: history.compare(review.findings, [], None, now))
    compared = timed(
        "history, against a baseline",
        lambda: history.compare(review.findings, [], baseline, now),
    )
    print(
        json.dumps(
            {
                "records": args.records,
                "findings": len(review.findings),
                "open": compared.count("open"),
                "new": plain.count("new"),
                "seconds": timings,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
