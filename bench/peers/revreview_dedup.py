"""revreview's side of bench/dedup_peers.py: load a native JSON batch and find its
duplicates through the engine's public path, timed like the peers.

    .venv/bin/python bench/peers/revreview_dedup.py FILE [--groups OUT.json]

Load is what `manage.py review` does to the stored bytes (reviews.engine.ingest.
parse_upload: decode, validate, build the Batch); match is the dedup specialist
(reviews.engine.specialists.dedup.detect) under the default Rules. Prints one JSON
object: seconds for load and match, peak RSS, and the groups found per kind; --groups
writes the groups themselves (kind -> list of record-id lists) for scoring.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

from summary import report  # bench/peers/summary.py, beside this script

from reviews.engine.ingest import Limits, UploadedFile, parse_upload
from reviews.engine.rules import Rules
from reviews.engine.specialists import dedup

TOOL = "revreview"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--groups", type=Path, help="write the groups found here")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    data = args.file.read_bytes()
    # The deployment's upload limit is beside the point here: any size the bench asks for.
    limits = Limits(max_bytes=len(data) + 1)
    upload = [UploadedFile(name=args.file.name, data=data)]
    batch = parse_upload(upload, as_of=None, received_at=datetime.now(UTC), limits=limits)
    del data, upload
    loaded = time.perf_counter()
    findings = dedup.detect(batch, Rules())
    matched = time.perf_counter()

    groups: dict[str, list[list[str]]] = defaultdict(list)
    for finding in findings:
        if finding.kind in dedup.MERGE_KINDS:
            groups[finding.kind].append(finding.record_ids)
    report(TOOL, (started, loaded, matched), groups, args.groups)
    return 0


if __name__ == "__main__":
    sys.exit(main())
