"""Tuning a dataset (docs/history.md): 12 syncs of 10,000 records each, a team that
dismisses stale_enrichment findings up to 500 days old; time parsing the stored syncs,
observing them (every detector, with measured values), proposing, and replaying the
proposal over every sync. Engine only (what `manage.py tune` runs besides reading the
stored uploads from the database).

    .venv/bin/python bench/tune_replay.py [--records 10000] [--syncs 12]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reviews.engine.history.observe import observe  # noqa: E402
from reviews.engine.history.policy import EMPTY  # noqa: E402
from reviews.engine.history.replay import replay  # noqa: E402
from reviews.engine.history.root_causes import new_by_sync, record_fields, root_causes  # noqa: E402
from reviews.engine.history.tune import propose  # noqa: E402
from reviews.engine.ingest import UploadedFile, parse_upload  # noqa: E402
from reviews.engine.rules import Rules  # noqa: E402
from reviews.samplegen.sync import generate_syncs  # noqa: E402


def aged(batch: dict, first: datetime, every: int = 15) -> dict:
    """One company in `every` enriched 200-699 days before the first sync (as the tests)."""
    for company in batch["companies"]:
        number = int(hashlib.sha256(company["id"].encode()).hexdigest()[:8], 16)
        if number % every == 0:
            company["enrichedAt"] = (first - timedelta(days=200 + number % 500)).date().isoformat()
    return batch


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--syncs", type=int, default=12)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    blobs, first = [], None
    for batch, _ in generate_syncs(args.records, seed=12, syncs=args.syncs):
        first = first or datetime.fromisoformat(batch["exportedAt"].replace("Z", "+00:00"))
        blobs.append(orjson.dumps(aged(batch, first)))
    generated = time.perf_counter()
    batches = [
        parse_upload([UploadedFile("s.json", b)], as_of=None, received_at=datetime.now(UTC))
        for b in blobs
    ]
    parsed = time.perf_counter()
    observed = [observe(b, Rules(), EMPTY) for b in batches]
    dismissed = {
        s.fingerprint
        for sync in observed
        for s in sync
        if s.kind == "stale_enrichment" and s.measure <= 500
    }
    proposals = propose(observed, dismissed)
    causes = root_causes(
        new_by_sync(observed), {k: v for b in batches for k, v in record_fields(b).items()}
    )
    proposed = time.perf_counter()
    results = [replay(batches, Rules(), EMPTY, p.policy, dismissed) for p in proposals]
    replayed = time.perf_counter()
    print(f"{args.syncs} syncs x {args.records:,} records")
    print(f"generate     {generated - started:7.2f} s (not part of tuning)")
    print(f"parse        {parsed - generated:7.2f} s")
    print(f"observe+propose+root causes {proposed - parsed:7.2f} s")
    print(f"replay       {replayed - proposed:7.2f} s ({len(proposals)} proposal(s))")
    print(f"tuning total {replayed - generated:7.2f} s")
    for proposal, result in zip(proposals, results, strict=True):
        print(proposal.id, {k: v for k, v in result.items() if k != "per_sync"})
    print(f"{len(causes)} root cause(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
