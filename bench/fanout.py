"""The fan-out through a worker: is a run's wall time the slowest specialist plus the
coordinator, or their sum?

    .venv/bin/python bench/fanout.py FILE [--concurrency 2]

Starts a Celery worker (in the mode the environment configures), sends FILE through
`manage.py review FILE --worker --no-cache`, then reads the run's agent rows: each
specialist's time, their sum, the slowest, the coordinator's, and the run's wall time
(claimed to finished). Each worker process parses a stored batch once and keeps it for
the next task of the run, so with two processes the batch is parsed twice (at the same
time), not once per specialist.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "revreview.settings")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args(argv)
    worker = subprocess.Popen(  # only this process (and its pool) is stopped below
        [sys.executable, "-m", "celery", "-A", "revreview", "worker", "--loglevel=WARNING",
         f"--concurrency={args.concurrency}", "--without-gossip", "--without-mingle",
         "--without-heartbeat"],
        cwd=ROOT,
    )  # fmt: skip
    try:
        time.sleep(5)
        started = time.perf_counter()
        review = subprocess.run(
            [sys.executable, "manage.py", "review", str(args.file), "--worker", "--no-cache",
             "--format", "json", "--timeout", "1800"],
            cwd=ROOT, capture_output=True,
        )  # fmt: skip
        wall = time.perf_counter() - started
    finally:
        worker.terminate()
        worker.wait(timeout=60)
    if review.returncode not in (0, 1):
        print(review.stderr.decode()[-3000:])
        return 1

    import django

    django.setup()
    from reviews.models import AgentRun, ReviewRun

    run = ReviewRun.objects.order_by("-pk").first()
    agents = {a.agent: a for a in run.agents.all()}
    seconds = {
        name: (a.finished_at - a.started_at).total_seconds()
        for name, a in agents.items()
        if a.started_at and a.finished_at
    }
    specialists = {n: s for n, s in seconds.items() if n != AgentRun.COORDINATOR}
    print(f"| {args.file.name}, concurrency {args.concurrency} | s |\n|---|---:|")
    for name, value in specialists.items():
        print(f"| {name} (parse included for the first task of a process) | {value:.2f} |")
    print(f"| sum of the specialists | {sum(specialists.values()):.2f} |")
    print(f"| slowest specialist | {max(specialists.values()):.2f} |")
    print(f"| coordinator | {seconds.get(AgentRun.COORDINATOR, 0):.2f} |")
    print(f"| run: claimed to finished | {run.duration_seconds:.2f} |")
    print(f"| CLI end to end (store, parse, dispatch, wait) | {wall:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
