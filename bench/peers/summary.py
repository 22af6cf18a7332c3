"""What every tool of bench/dedup_peers.py prints and writes, in one shape: the last
line of its standard output is a JSON object (tool, load_s, match_s, peak_mb, found per
kind, and any `extra`), and --groups gets the groups themselves (kind -> record-id lists)."""

from __future__ import annotations

import json
import resource
from pathlib import Path


def report(
    tool: str,
    seconds: tuple[float, float, float],
    groups: dict[str, list[list[str]]],
    groups_path: Path | None,
    **extra: object,
) -> None:
    """`seconds`: perf_counter() when loading started, when it ended, when matching ended."""
    started, loaded, matched = seconds
    if groups_path:
        groups_path.write_text(json.dumps(groups))
    summary = {
        "tool": tool,
        **extra,
        "load_s": round(loaded - started, 3),
        "match_s": round(matched - loaded, 3),
        "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "found": {kind: len(found) for kind, found in sorted(groups.items())},
    }
    print(json.dumps(summary))
