"""Where the time of one review goes: each stage of `manage.py review FILE --format json`
timed on its own, in one process, in the order the CLI runs them.

    .venv/bin/python bench/stages.py FILE

Measures whichever mode the environment configures (SQLite, or DATABASE_URL). The
stages are the CLI's own functions, called one after the other, so their sum is close
to the CLI's wall time less start-up; the specialists run one after the other here, as
they do in the CLI's process. User and system CPU seconds and page faults (this
process's) are printed beside wall seconds: on a shared machine CPU says what the work
costs, wall what it waited; system time is mostly the kernel handing out fresh memory.
The last two columns are the process's peak RSS after each stage and its RSS then: where
the memory goes, and what each stage keeps.
"""

from __future__ import annotations

import gc
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "revreview.settings")


def main(argv: list[str]) -> int:
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from reviews.engine import coordinator
    from reviews.engine.history import compare as history
    from reviews.engine.ingest import UploadedFile
    from reviews.engine.risk import classify_risk
    from reviews.engine.specialists import NAMES, detector
    from reviews.orchestration.intake.serve import create_run
    from reviews.orchestration.intake.submit import accept, store_upload
    from reviews.orchestration.run import handoff
    from reviews.orchestration.run.findings_store import write_findings
    from reviews.orchestration.serving import decide as serving
    from reviews.reports.report import stream_report_json

    call_command("migrate", verbosity=0)
    path = Path(argv[0])
    # name, wall s, user CPU s, system CPU s, page faults, peak RSS MB so far, RSS MB now
    # (this process's)
    rows: list[tuple[str, float, float, float, int, float, float]] = []

    def stage(name: str, work: Callable[[], Any]) -> Any:
        started, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        result = work()
        after = resource.getrusage(resource.RUSAGE_SELF)
        rows.append(
            (
                name,
                time.perf_counter() - started,
                after.ru_utime - before.ru_utime,
                after.ru_stime - before.ru_stime,
                after.ru_minflt - before.ru_minflt,
                after.ru_maxrss / 1024,
                rss_now_mb(),
            )
        )
        return result

    data = stage("read the file", path.read_bytes)
    files = [UploadedFile(name=path.name, data=data)]
    batch = stage("store the upload (bytes + sha256)", lambda: store_upload(files))
    parsed = stage("parse + cache key (accept)", lambda: accept(batch, files=files))
    stage("  of which the cache key (again)", lambda: serving.content_key(parsed))
    del data  # as the CLI does: the upload is stored and parsed, its bytes are let go
    files.clear()
    risk = stage("risk tier", lambda: classify_risk(parsed, settings.REVIEW_RULES))
    run = stage("run rows", lambda: create_run(batch, parsed, tier=risk.tier))
    blobs = {}
    for name in NAMES:
        found = stage(
            f"detector: {name}", lambda n=name: detector(n)(parsed, settings.REVIEW_RULES)
        )
        blobs[name] = stage(
            f"  pack {name} ({len(found):,})",
            lambda n=name, f=found: handoff.pack_for_coordinator(run.pk, n, f, []),
        )
    # The coordinator, as coordination._coordinate runs it: the collector paused throughout,
    # each specialist's findings handed over in-process (the blob checked, not unpacked).
    gc.disable()
    findings = stage(
        "hand-off (kept findings)",
        lambda: [f for n in NAMES for f in handoff.received_findings(run.pk, n, blobs[n])],
    )
    review = stage("fuse (coordinator)", lambda: coordinator.fuse(findings, batch.counts, []))
    comparison = stage(
        "history marks (fingerprints)",
        lambda: history.compare(review.findings, [], None, parsed.as_of),
    )
    from django.db import transaction

    def write() -> int:
        with transaction.atomic():
            return write_findings(run.pk, review.findings, comparison.findings)

    stage(f"write {len(review.findings):,} findings", write)
    gc.enable()
    size = stage("report JSON, streamed", lambda: sum(map(len, stream_report_json(run))))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"| stage ({path.name}, {connection_vendor()}) | wall s | user s | sys s | faults "
        "| peak RSS MB | RSS now MB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, wall, user, system, faults, peak_so_far, now in rows:
        print(
            f"| {name} | {wall:.2f} | {user:.2f} | {system:.2f} | {faults:,} "
            f"| {peak_so_far:,.0f} | {now:,.0f} |"
        )
    counted = [r for r in rows if not r[0].startswith("  of which")]
    totals = [sum(r[i] for r in counted) for i in range(1, 5)]
    print("| total | {:.2f} | {:.2f} | {:.2f} | {:,} |".format(*totals))
    print(f"\npeak RSS {peak:,.0f} MB; JSON {size / 2**20:,.0f} MB")
    return 0


def rss_now_mb() -> float:
    """This process's resident memory now (Linux's /proc), beside the peak so far: what a
    stage keeps, not only what it touched."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def connection_vendor() -> str:
    from django.db import connection

    return connection.vendor


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
