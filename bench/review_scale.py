"""How revreview scales: generate batches of 10k / 100k / 1M records with
reviews.samplegen, then time a bare json.load of each file and the CLI end to end
(`manage.py review FILE --format json --no-cache`), each in a fresh process, with peak memory.

    .venv/bin/python bench/review_scale.py [--sizes 10000,100000,1000000] [--keep]
        [--stale-sizes 1000000] [--stale-share 0.5]

`make bench` runs it twice: the sizes above, then ten million records alone
(`--sizes 10000000 --stale-sizes ''`: a 2 GB file, reviewed as a ZIP since a stored
upload is one database row).

--stale-sizes adds findings-heavy batches: --stale-share of the background companies
have enrichment older than 180 days (make_sample --stale-share), as in a CRM nobody
re-enriches; a million records then yield ~150k findings.

Child processes inherit this environment, so the benchmark measures whichever mode is
configured (SQLite + filesystem broker, or DATABASE_URL / REDIS_URL). Peak RSS is the
largest of: the biggest single process (getrusage in a wrapper process that runs the
command and waits for it) and the sum over the process tree (psutil, polled).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
SEED = 42
POLL_SECONDS = 0.05
# The deployment's upload limit (200 MB) is beside the point here: ten million records
# unpack to 2 GB.
UPLOAD_LIMIT = 4 * 2**30

# Runs the command given after its two paths with stdout to the second, waits, and
# writes its exit code and the peak RSS of its biggest descendant (ru_maxrss, KiB on
# Linux) to the first.
WRAPPER = """
import json, resource, subprocess, sys
with open(sys.argv[2], "wb") as out:
    rc = subprocess.call(sys.argv[3:], stdout=out)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
open(sys.argv[1], "w").write(json.dumps({"rc": rc, "maxrss_kib": peak}))
"""
JSON_LOAD = "import json, sys; json.load(open(sys.argv[1], 'rb'))"


@dataclass
class Measurement:
    step: str
    records: int
    seconds: float
    peak_mb: float
    exit_code: int
    stderr_tail: str = ""
    outcome: str = ""  # what the step produced, e.g. the verdict and findings
    ratio: float = 0.0  # a review's wall time over json.load's of the same file

    @property
    def records_per_second(self) -> float:
        return self.records / self.seconds if self.seconds else 0.0


def measure(
    step: str,
    records: int,
    command: list[str],
    timeout: float,
    describe: Callable[[bytes], str] | None = None,
) -> Measurement:
    """Run `command` in a fresh wrapper process; wall time, peak RSS, exit code, and
    what `describe` makes of its standard output."""
    with tempfile.TemporaryDirectory() as scratch:
        result_path = Path(scratch) / "result.json"
        stdout_path = Path(scratch) / "stdout.txt"
        stderr_path = Path(scratch) / "stderr.txt"
        with stderr_path.open("wb") as stderr:
            started = time.perf_counter()
            wrapper = psutil.Popen(
                [sys.executable, "-c", WRAPPER, str(result_path), str(stdout_path), *command],
                stderr=stderr,
                cwd=ROOT,
                env={**os.environ, "MAX_UPLOAD_BYTES": str(UPLOAD_LIMIT)},
            )
            tree_peak = _poll_tree_peak(wrapper, timeout)
            seconds = time.perf_counter() - started
        result = json.loads(result_path.read_text()) if result_path.exists() else {}
        stderr_tail = _tail(stderr_path.read_text(errors="replace"))
        outcome = describe(stdout_path.read_bytes()) if describe and stdout_path.exists() else ""
    exit_code = result.get("rc", wrapper.returncode if wrapper.returncode is not None else -1)
    peak = max(tree_peak, result.get("maxrss_kib", 0) * 1024)
    return Measurement(step, records, seconds, peak / 2**20, exit_code, stderr_tail, outcome)


def review_outcome(output: bytes, truth: dict) -> str:
    """The verdict, the number of findings, and how they score against the ground
    truth (planted cases found, decoys wrongly flagged); "" if there is no report."""
    try:
        report = json.loads(output)
    except ValueError:
        return ""
    if not isinstance(report, dict) or "verdict" not in report:
        return ""
    findings = report.get("findings", [])
    by_record: dict[str, list[dict]] = {}
    for finding in findings:
        for record_id in finding.get("record_ids", []):
            by_record.setdefault(record_id, []).append(finding)
    hits = [
        any(
            f["kind"] == item["kind"] and set(item["record_ids"]) <= set(f["record_ids"])
            for f in by_record.get(item["record_ids"][0], [])
        )
        for item in truth["planted"]
    ]
    found = sum(hits)
    # Every kind the samples plant (every kind of docs/rules.md a JSON batch can hold).
    kinds = {item["kind"] for item in truth["planted"]}
    missed = sorted(
        kinds - {i["kind"] for i, hit in zip(truth["planted"], hits, strict=True) if hit}
    )
    flagged = sum(
        any(
            f["severity"] in ("warning", "critical")
            and f["kind"] in decoy["not_kinds"]
            and set(decoy["record_ids"]) <= set(f["record_ids"])
            for f in by_record.get(decoy["record_ids"][0], [])
        )
        for decoy in truth["decoys"]
    )
    return (
        f"{report['run']['mode']}: {report['verdict']}, {len(findings)} findings; planted found "
        f"{found}/{len(truth['planted'])} ({len(kinds) - len(missed)}/{len(kinds)} kinds"
        f"{'; missed: ' + ', '.join(missed) if missed else ''}), decoys flagged "
        f"{flagged}/{len(truth['decoys'])}"
    )


def _poll_tree_peak(process: psutil.Popen, timeout: float) -> int:
    """Largest summed RSS of the process and its descendants seen while it runs."""
    deadline = time.monotonic() + timeout
    peak = 0
    while process.poll() is None:
        if time.monotonic() > deadline:
            _kill_tree(process)
            break
        peak = max(peak, _tree_rss(process))
        time.sleep(POLL_SECONDS)
    process.wait()
    return peak


def _tree_rss(process: psutil.Process) -> int:
    total = 0
    try:
        members = [process, *process.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    for member in members:
        try:
            total += member.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def _kill_tree(process: psutil.Process) -> None:
    # Only the processes this benchmark started: the wrapper and its descendants.
    for member in [*process.children(recursive=True), process]:
        try:
            member.kill()
        except psutil.NoSuchProcess:
            pass


def _tail(text: str, lines: int = 8) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def generate(records: int, stale_share: float = 0.0) -> tuple[Path, Measurement]:
    """The batch file for `records`, generated in a fresh process so its time and
    memory are measured like the other steps."""
    name = f"scale-{records}-{SEED}" if not stale_share else f"scale-stale-{records}-{SEED}"
    path = OUT / f"{name}.json"
    code = (
        "import sys; from reviews.samplegen import write_sample; "
        "write_sample(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), "
        "stale_share=float(sys.argv[4]))"
    )
    command = [sys.executable, "-c", code, str(path), str(records), str(SEED), str(stale_share)]
    return path, measure("generate", records, command, timeout=1800)


# A stored upload is one database row, and neither database takes one much over 1 GB
# (docs/scaling.md): a bigger batch is reviewed as the ZIP a user would send.
ZIP_OVER_BYTES = 900 * 2**20


def zipped(path: Path) -> Path:
    """The batch in a ZIP beside it (deflate level 1: the bench times the review, not this)."""
    archive = path.with_suffix(".zip")
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as out:
        out.write(path, path.name)
    return archive


def bench_size(records: int, timeout: float, stale_share: float = 0.0) -> list[Measurement]:
    path, generated = generate(records, stale_share)
    if generated.exit_code != 0:
        return [generated]
    size = path.stat().st_size
    generated.step = f"generate ({size / 2**20:.1f} MB)"
    upload = zipped(path) if size > ZIP_OVER_BYTES else path
    # The file's write-back to disk would otherwise land in the timed steps after it.
    os.sync()
    loaded = measure("json.load", records, [sys.executable, "-c", JSON_LOAD, str(path)], timeout)
    # write_sample puts the ground truth beside the batch: scale-N.json -> scale-N.truth.json
    truth = json.loads(path.with_suffix(".truth.json").read_text(encoding="utf-8"))
    # --no-cache: a second `make bench` on the same database would time a cache hit.
    review_command = [
        sys.executable, "manage.py", "review", str(upload), "--format", "json", "--no-cache"
    ]  # fmt: skip
    label = "review --format json" + (f" (stale {stale_share:.0%})" if stale_share else "")
    label += " (as a ZIP)" if upload != path else ""
    reviewed = measure(
        label,
        records,
        review_command,
        timeout,
        describe=lambda output: review_outcome(output, truth),
    )
    reviewed.ratio = reviewed.seconds / loaded.seconds if loaded.seconds else 0.0
    return [generated, loaded, reviewed]


def markdown(rows: list[Measurement]) -> str:
    lines = [
        "| records | step | wall s | peak RSS MB | records/s | x json.load | exit | outcome |",
        "|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        ratio = f"{row.ratio:.1f}" if row.ratio else ""
        lines.append(
            f"| {row.records:,} | {row.step} | {row.seconds:.2f} | {row.peak_mb:.0f} "
            f"| {row.records_per_second:,.0f} | {ratio} | {row.exit_code} | {row.outcome} |"
        )
    return "\n".join(lines)


def failures(rows: list[Measurement]) -> str:
    """The review exits 0 or 1 by verdict, but a crash exits 1 too: a review only
    succeeded if it printed a verdict. Other steps must exit 0."""
    notes = []
    for row in rows:
        if row.step.startswith("review"):
            ok = row.exit_code in (0, 1) and bool(row.outcome)
        else:
            ok = row.exit_code == 0
        if not ok:
            notes.append(f"{row.step} on {row.records:,} records exited {row.exit_code}:")
            notes.append("    " + (row.stderr_tail or "(no stderr)").replace("\n", "\n    "))
    return "\n".join(notes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument(
        "--stale-sizes", default="1000000", help="findings-heavy sizes ('' for none)"
    )
    parser.add_argument("--stale-share", type=float, default=0.5)
    parser.add_argument("--keep", action="store_true", help="keep the generated batches")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per step")
    parser.add_argument(
        "--migrate", action="store_true", help="run manage.py migrate first (the review stores)"
    )
    args = parser.parse_args(argv)
    sizes = [int(size.replace("_", "")) for size in args.sizes.split(",") if size.strip()]
    stale_sizes = [int(n.replace("_", "")) for n in args.stale_sizes.split(",") if n.strip()]

    OUT.mkdir(parents=True, exist_ok=True)
    # Only the kind of each service: the URLs may hold passwords.
    database = "postgres" if os.environ.get("DATABASE_URL") else "sqlite"
    broker = "redis" if os.environ.get("REDIS_URL") else "filesystem broker"
    print(f"mode: {database} + {broker}; python {sys.version.split()[0]}", flush=True)
    if args.migrate:
        migrate = [sys.executable, "manage.py", "migrate", "--noinput", "--verbosity", "0"]
        subprocess.run(migrate, cwd=ROOT, check=True)
    rows: list[Measurement] = []
    for records in sizes:
        rows.extend(bench_size(records, args.timeout))
        print(f"done: {records:,} records", file=sys.stderr, flush=True)
    for records in stale_sizes:
        rows.extend(bench_size(records, args.timeout, args.stale_share))
        print(f"done: {records:,} records, stale", file=sys.stderr, flush=True)
    print(markdown(rows))
    notes = failures(rows)
    if notes:
        print("\n" + notes)
    if not args.keep:
        for path in [*OUT.glob(f"scale-*{SEED}*.json"), *OUT.glob(f"scale-*{SEED}*.zip")]:
            path.unlink()
    return 1 if notes else 0


if __name__ == "__main__":
    sys.exit(main())
