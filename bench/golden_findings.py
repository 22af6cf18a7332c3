"""The same review, proven, on the big batches (issue 35): every finding the engine gives
the bench's generated batches (bench/review_scale.py's generator and seed: 10k, 100k and
1M records, and the findings-heavy 1M), recorded with the current code, then checked byte
for byte after a change. tests/engine/test_golden.py does the same for the samples; the
lines are the same (tests/engine/golden_lines.py says what they hold).

    .venv/bin/python bench/golden_findings.py --record [--sizes 10000,100000,1000000]
        [--stale-sizes 1000000] [--stale-share 0.5] [--reuse] [--keep]
    .venv/bin/python bench/golden_findings.py --check [same sizes]

--record writes .bench/golden/<batch>.jsonl.gz (outside git: a findings-heavy 1M review
is ~100 MB of lines) and <batch>.json beside it: the batch's sha256, the commit, the time.
--check reviews the batch again and compares: exit 0 if every line is the same, 1 with
what differs, 2 if there is no recording or the batch itself is not the one recorded (the
generator changed: record again with the old code first). Re-recording after a change is
a deliberate act: its difference goes in CHANGELOG.md.

Each batch is generated in a fresh process (review_scale.generate); --reuse takes the one
bench/out already holds (kept by --keep, here or in review_scale.py). The review runs in
this process, rules only, as the engine gives it (no database): parse, the four
detectors, the coordinator, every near miss. Times and this process's peak RSS printed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import review_scale  # noqa: E402  (a sibling script: the generator, its seed and paths)

from reviews.engine.ingest import Limits, UploadedFile  # noqa: E402
from tests.engine.golden_lines import (  # noqa: E402
    differences,
    read_lines,
    upload_lines,
    write_lines,
)

GOLDEN = ROOT / ".bench" / "golden"


def batch_path(records: int, stale_share: float) -> Path:
    """Where review_scale.generate writes the batch (its name, its seed)."""
    name = f"scale-{records}" if not stale_share else f"scale-stale-{records}"
    return review_scale.OUT / f"{name}-{review_scale.SEED}.json"


def batch_for(records: int, stale_share: float, reuse: bool) -> tuple[Path, float | None]:
    """The batch's path, and the seconds its generation took (None: reused)."""
    path = batch_path(records, stale_share)
    if reuse and path.exists():
        return path, None
    path, generated = review_scale.generate(records, stale_share)
    if generated.exit_code != 0:
        raise SystemExit(f"generating {records:,} records failed:\n{generated.stderr_tail}")
    return path, generated.seconds


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    return done.stdout.strip() or "unknown"


def one_batch(records: int, stale_share: float, args: argparse.Namespace) -> dict:
    """Record or check one batch; its row for the table (and its verdict, `outcome`)."""
    path, generate_s = batch_for(records, stale_share, args.reuse)
    try:
        return _record_or_check(path, generate_s, records, stale_share, args)
    finally:
        if not args.keep:
            path.unlink(missing_ok=True)
            path.with_suffix(".truth.json").unlink(missing_ok=True)


def _record_or_check(
    path: Path,
    generate_s: float | None,
    records: int,
    stale_share: float,
    args: argparse.Namespace,
) -> dict:
    data = path.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    recording = GOLDEN / f"{path.stem}.jsonl.gz"
    about = recording.with_suffix("").with_suffix(".json")
    row = {"batch": path.stem, "records": records, "generate_s": generate_s, "size": len(data)}
    if args.check:
        if not recording.exists():
            return {**row, "outcome": f"no recording at {recording}", "code": 2}
        recorded_sha = json.loads(about.read_text())["sha256"]
        if recorded_sha != sha:
            return {
                **row,
                "outcome": f"the batch is not the one recorded (sha256 {sha[:12]}, recorded "
                f"{recorded_sha[:12]}): the generator or the file changed",
                "code": 2,
            }
    started = time.perf_counter()
    files = [UploadedFile(path.name, data)]
    del data  # the parse lets go of the bytes once decoded
    lines = upload_lines(files, limits=Limits(max_bytes=review_scale.UPLOAD_LIMIT))
    del files
    row["review_s"] = time.perf_counter() - started
    row["lines"] = len(lines)
    row["findings"] = sum(line.startswith(b'{"finding"') for line in lines)
    started = time.perf_counter()
    if args.record:
        write_lines(recording, lines)
        about.write_text(
            json.dumps(
                {
                    "sha256": sha,
                    "records": records,
                    "stale_share": stale_share,
                    "commit": commit(),
                    "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
                    "lines": len(lines),
                },
                indent=2,
            )
        )
        outcome, code = f"recorded ({recording.stat().st_size / 2**20:.1f} MiB gzip)", 0
    else:
        difference = differences(read_lines(recording), lines)
        outcome, code = ("the same, byte for byte", 0) if not difference else (difference, 1)
    row["compare_s"] = time.perf_counter() - started
    row["peak_mib"] = peak_mib()
    return {**row, "outcome": outcome, "code": code}


def markdown(rows: list[dict], mode: str) -> str:
    lines = [
        f"| batch | records | MB | generate s | parse + review s | {mode} s | lines "
        "| findings | peak RSS MiB (so far) | outcome |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        first = row["outcome"].splitlines()[0]
        generated = "reused" if row["generate_s"] is None else f"{row['generate_s']:.1f}"
        lines.append(
            f"| {row['batch']} | {row['records']:,} | {row['size'] / 1e6:.0f} "
            f"| {generated} | {row.get('review_s', 0):.1f} "
            f"| {row.get('compare_s', 0):.1f} | {row.get('lines', 0):,} "
            f"| {row.get('findings', 0):,} | {row.get('peak_mib', peak_mib()):,.0f} | {first} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--record", action="store_true", help="write the recordings anew")
    mode.add_argument("--check", action="store_true", help="compare with the recordings")
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--stale-sizes", default="1000000", help="findings-heavy ('' for none)")
    parser.add_argument("--stale-share", type=float, default=0.5)
    parser.add_argument("--reuse", action="store_true", help="take bench/out's batch if there")
    parser.add_argument("--keep", action="store_true", help="keep the generated batches")
    args = parser.parse_args(argv)
    sizes = [int(n.replace("_", "")) for n in args.sizes.split(",") if n.strip()]
    stale = [int(n.replace("_", "")) for n in args.stale_sizes.split(",") if n.strip()]

    review_scale.OUT.mkdir(parents=True, exist_ok=True)
    jobs = [(n, 0.0) for n in sizes] + [(n, args.stale_share) for n in stale]
    rows = []
    for records, share in jobs:
        rows.append(one_batch(records, share, args))
        print(f"done: {rows[-1]['batch']}", file=sys.stderr, flush=True)
    print(markdown(rows, "write" if args.record else "compare"))
    for row in rows:
        if row["code"]:
            print(f"\n{row['batch']}: {row['outcome']}")
    return max((row["code"] for row in rows), default=0)


if __name__ == "__main__":
    sys.exit(main())
