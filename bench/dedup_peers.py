"""revreview's load + dedup beside two peers a competent engineer would write instead:
rapidfuzz with blocking, and Splink on DuckDB (bench/peers/). Same batch, same rules,
each in a fresh process; times, peak memory and recall against the batch's ground truth.

    .venv/bin/python bench/dedup_peers.py [--records 1000000] [--repeat 1] [--file FILE]
        [--splink-threads N] [--keep] [--no-floor]

The batch is generated as bench/review_scale.py generates it (reviews.samplegen, seed
42), unless --file names one (its x.truth.json beside it). Every tool prints its own
load and match seconds (interpreter start and imports left out, for all alike) and
writes the duplicate groups it found per kind; this script scores them all the same way:

- recall of a kind: the planted duplicates of that kind (truth "planted") some group of
  that kind contains whole, as `make bench` scores a review;
- decoys flagged: "must not flag" cases (truth "decoys") a group of a kind they must not
  be contains whole;
- unplanted groups: groups of a kind containing no planted duplicate of it (duplicates
  the generator made by chance, or false matches).

Peak memory is the process's own peak RSS (os.wait4). With --repeat N the tools take
turns N times; each row is the run of median total. Then revreview's total over the
fastest peer's (issue 28 asks for at most 0.5), and bench/load_floor.py on the same
batch with that peer's time: the least Python can take beside that budget (--no-floor
skips it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path

from review_scale import OUT, SEED, generate

from reviews.engine.specialists.dedup import MERGE_KINDS

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / "bench" / "peers"
# The kinds whose records are the same thing entered twice (the fix plan merges them), of
# the objects the bench's batch has: it is HubSpot-shaped, with no leads.
KINDS = tuple(kind for kind, records in MERGE_KINDS.items() if records != "leads")
SHORT = {"company_same_domain": "co dom", "company_same_name": "co name",
         "contact_same_email": "ct email", "contact_same_person": "ct person",
         "deal_entered_twice": "deal twice"}  # fmt: skip


@dataclass
class Run:
    tool: str
    load_s: float = 0.0
    match_s: float = 0.0
    wall_s: float = 0.0
    peak_mb: float = 0.0
    exit_code: int = 0
    error: str = ""
    recall: dict[str, tuple[int, int]] = field(default_factory=dict)
    decoys: tuple[int, int] = (0, 0)
    unplanted: int = 0

    @property
    def total_s(self) -> float:
        return self.load_s + self.match_s


def tools(splink_threads: int | None) -> list[tuple[str, list[str]]]:
    """Each tool's command, revreview first; Splink only if the bench extra is installed."""
    python = sys.executable
    found = [
        ("revreview", [python, str(PEERS / "revreview_dedup.py")]),
        ("rapidfuzz blocking", [python, str(PEERS / "rapidfuzz_blocking.py")]),
    ]
    if find_spec("splink") and find_spec("duckdb"):
        command = [python, str(PEERS / "splink_duckdb.py")]
        if splink_threads:
            command += ["--threads", str(splink_threads)]
        found.append(("Splink on DuckDB", command))
    else:
        print("Splink or DuckDB missing: install the bench extra (make bench does)", flush=True)
    return found


def run(tool: str, command: list[str], batch: Path, timeout: float) -> tuple[Run, dict]:
    """One run of a tool in a fresh process: its summary, and the groups it wrote."""
    with tempfile.TemporaryDirectory() as scratch:
        groups_path = Path(scratch) / "groups.json"
        stdout_path, stderr_path = Path(scratch) / "out", Path(scratch) / "err"
        with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
            started = time.perf_counter()
            process = subprocess.Popen(
                [*command, str(batch), "--groups", str(groups_path)],
                stdout=out,
                stderr=err,
                cwd=ROOT,
            )
            # wait4, not wait: the child's own resource usage, its peak RSS among it.
            _, status, usage = _wait4(process, timeout)
            wall = time.perf_counter() - started
        result = Run(tool, wall_s=wall, peak_mb=usage.ru_maxrss / 1024 if usage else 0.0)
        result.exit_code = os.waitstatus_to_exitcode(status) if usage else -1
        lines = stdout_path.read_text().strip().splitlines()
        if result.exit_code != 0 or not lines:
            result.error = stderr_path.read_text(errors="replace").strip()[-2000:]
            return result, {}
        summary = json.loads(lines[-1])
        result.load_s, result.match_s = summary["load_s"], summary["match_s"]
        return result, json.loads(groups_path.read_text())


def _wait4(process: subprocess.Popen, timeout: float):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            process.returncode = os.waitstatus_to_exitcode(status)  # reaped: Popen must not
            return pid, status, usage
        time.sleep(0.05)
    process.kill()  # the tool this script started, alone
    process.wait()
    return process.pid, 0, None


def score(result: Run, groups: dict[str, list[list[str]]], truth: dict) -> None:
    """Recall per kind, decoys flagged and unplanted groups, the same for every tool."""
    containing: dict[tuple[str, str], list[set[str]]] = {}
    for kind in KINDS:
        for group in groups.get(kind, []):
            members = set(group)
            for record_id in group:
                containing.setdefault((kind, record_id), []).append(members)

    def found(kind: str, ids: list[str]) -> bool:
        return any(set(ids) <= g for g in containing.get((kind, ids[0]), []))

    planted = [p for p in truth["planted"] if p["kind"] in KINDS]
    for kind in KINDS:
        mine = [p["record_ids"] for p in planted if p["kind"] == kind]
        result.recall[kind] = (sum(found(kind, ids) for ids in mine), len(mine))
    decoys = [d for d in truth["decoys"] if set(d["not_kinds"]) & set(KINDS)]
    flagged = sum(
        any(found(kind, d["record_ids"]) for kind in d["not_kinds"] if kind in KINDS)
        for d in decoys
    )
    result.decoys = (flagged, len(decoys))
    planted_sets = {
        kind: [set(p["record_ids"]) for p in planted if p["kind"] == kind] for kind in KINDS
    }
    result.unplanted = sum(
        not any(p <= set(group) for p in planted_sets[kind])
        for kind in KINDS
        for group in groups.get(kind, [])
    )


def table(rows: list[Run], spread: dict[str, str]) -> str:
    kinds = " | ".join(SHORT[k] for k in KINDS)
    lines = [
        f"| tool | load s | match s | total s | process s | peak MB | {kinds} | decoys flagged "
        "| unplanted groups |",
        "|---|---:|---:|---:|---:|---:|" + "---:|" * len(KINDS) + "---:|---:|",
    ]
    for r in rows:
        if r.error or r.exit_code:
            lines.append(f"| {r.tool} | failed (exit {r.exit_code}) |")
            continue
        recall = " | ".join(f"{r.recall[k][0]}/{r.recall[k][1]}" for k in KINDS)
        lines.append(
            f"| {r.tool} | {r.load_s:.2f} | {r.match_s:.2f} | {r.total_s:.2f}{spread[r.tool]} "
            f"| {r.wall_s:.2f} | {r.peak_mb:,.0f} | {recall} | {r.decoys[0]}/{r.decoys[1]} "
            f"| {r.unplanted} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=lambda v: int(v.replace("_", "")), default=1_000_000)
    parser.add_argument("--repeat", type=int, default=1, help="runs of each tool, in turns")
    parser.add_argument("--file", type=Path, help="a native JSON batch with x.truth.json beside")
    parser.add_argument("--splink-threads", type=int, help="DuckDB threads (default: its own)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per run")
    parser.add_argument("--keep", action="store_true", help="keep the generated batch")
    parser.add_argument(
        "--no-floor", action="store_true", help="skip bench/load_floor.py after the table"
    )
    args = parser.parse_args(argv)

    if args.file:
        batch = args.file
    else:
        OUT.mkdir(parents=True, exist_ok=True)
        batch, generated = generate(args.records)
        if generated.exit_code != 0:
            print(f"generating the batch failed:\n{generated.stderr_tail}", file=sys.stderr)
            return 1
        os.sync()  # its write-back would otherwise land in the first tool's time
    truth = json.loads(
        batch.with_name(batch.name.removesuffix(".json") + ".truth.json").read_text()
    )
    counts = truth["counts"]
    python = sys.version.split()[0]
    print(f"{batch.name}: {sum(counts.values()):,} records ({counts}); python {python}; "
          f"{os.cpu_count()} CPUs", flush=True)  # fmt: skip

    runs: dict[str, list[Run]] = {}
    for turn in range(args.repeat):
        for tool, command in tools(args.splink_threads):
            result, groups = run(tool, command, batch, args.timeout)
            score(result, groups, truth)
            runs.setdefault(tool, []).append(result)
            print(f"run {turn + 1}: {tool}: {result.total_s:.2f} s", file=sys.stderr, flush=True)

    rows, spread = [], {}
    for tool, results in runs.items():
        ok = [r for r in results if not r.exit_code and not r.error] or results
        ok.sort(key=lambda r: r.total_s)
        rows.append(ok[(len(ok) - 1) // 2])
        low, high = ok[0].total_s, ok[-1].total_s
        spread[tool] = f" ({low:.2f}-{high:.2f})" if len(ok) > 1 else ""
    print(table(rows, spread))
    failed = [r for r in rows if r.error or r.exit_code]
    for r in failed:
        print(f"\n{r.tool} exited {r.exit_code}:\n    " + r.error.replace("\n", "\n    "))
    ours = next((r for r in rows if r.tool == "revreview" and r not in failed), None)
    peers = [r for r in rows if r.tool != "revreview" and r not in failed]
    if ours and peers:
        fastest = min(peers, key=lambda r: r.total_s)
        same = all(r.recall == ours.recall for r in peers)
        print(f"\nrevreview's load + dedup: {ours.total_s / fastest.total_s:.2f}x the fastest "
              f"peer's ({fastest.tool}, {fastest.total_s:.2f} s); issue 28 asks <= 0.5x. "
              f"Recall {'the same' if same else 'DIFFERS'} across tools.")  # fmt: skip
        if not args.no_floor:
            print(flush=True)
            floor = [sys.executable, str(ROOT / "bench" / "load_floor.py"), str(batch)]
            subprocess.run([*floor, "--peer-seconds", repr(fastest.total_s)], check=False)
    if not args.file and not args.keep:
        for path in OUT.glob(f"scale-{args.records}-{SEED}*.json"):
            path.unlink()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
