"""How fast the admin's and the runs list's search answers on a big run: one run with
154k findings (and a few small runs beside it, one of them naming Fabrikam), searched by
a record id, a title word, a company name and a batch file name, as reviews.search does
for every list.

    DATABASE_URL=postgres://revreview@127.0.0.1:5432/revreview \\
        .venv/bin/python bench/search_scale.py [--findings 154000]

It creates a throwaway test database (Django's test-database machinery: migrated, then
dropped), so it never touches real data. On SQLite there is no GIN index: the record id
search reads every finding's JSON text.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import django

ROOT = Path(__file__).resolve().parent.parent
REPEATS = 5


def timed(label: str, query) -> tuple[str, float, int]:
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        found = len(list(query()))
        times.append(time.perf_counter() - started)
    return label, statistics.median(times) * 1000, found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--findings", type=int, default=154_000)
    parser.add_argument(
        "--write-cost",
        type=int,
        default=0,
        help="also time writing this many findings with and without the title index",
    )
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "revreview.settings")
    django.setup()
    from django.db import connection
    from django.test.utils import setup_test_environment

    from reviews.models import Batch, Finding, ReviewRun
    from reviews.search import search_findings, search_runs

    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    # Its own name, so a test run or another benchmark on this server is never dropped.
    connection.settings_dict["TEST"]["NAME"] = f"test_search_bench_{os.getpid()}"
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        batches = [
            Batch.objects.create(file_name=f"export-{n}.json", sha256=f"{n:064x}", size_bytes=1)
            for n in range(5)
        ]
        runs = [ReviewRun.objects.create(batch=b, tier="full", as_of=b.created_at) for b in batches]
        big = runs[0]

        def write(run, count: int) -> float:
            started = time.perf_counter()
            Finding.objects.bulk_create(
                (
                    Finding(
                        run=run,
                        position=i,
                        category="dedup",
                        kind="company_same_domain",
                        severity="warning",
                        title=f"2 companies share the domain company{i}.example: "
                        f"Company {i} (co_{i}) and Company {i + 1} (co_{i + 1})",
                        detail="",
                        record_ids=[f"co_{i}", f"co_{i + 1}"],
                    )
                    for i in range(count)
                ),
                batch_size=10_000,
            )
            return time.perf_counter() - started

        insert_seconds = write(big, args.findings)
        small = runs[2]
        Finding.objects.create(
            run=small,
            position=0,
            category="freshness",
            kind="stale_enrichment",
            severity="warning",
            title="Company Fabrikam Ltd (co_fab) was last enriched 400 days ago",
            detail="",
            record_ids=["co_fab"],
        )
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        term = f"co_{args.findings // 2}"
        rows = [
            timed(
                f"runs by record id ({term})",
                lambda: search_runs(ReviewRun.objects.all(), term)[:100],
            ),
            timed(
                f"findings by record id ({term})",
                lambda: search_findings(Finding.objects.order_by("-id"), term)[:100],
            ),
            timed(
                "runs by company name (Fabrikam)",
                lambda: search_runs(ReviewRun.objects.all(), "Fabrikam")[:100],
            ),
            timed(
                "findings by company name (Fabrikam)",
                lambda: search_findings(Finding.objects.order_by("-id"), "Fabrikam")[:100],
            ),
            timed(
                "runs by file name (export-3)",
                lambda: search_runs(ReviewRun.objects.all(), "export-3")[:100],
            ),
            timed(
                "findings by title word, first page",
                lambda: search_findings(Finding.objects.order_by("-id"), "company17")[:100],
            ),
        ]
        plan = search_runs(ReviewRun.objects.all(), term).explain()
        if os.environ.get("SHOW_PLANS"):
            print(plan)
            print(search_runs(ReviewRun.objects.all(), "Fabrikam").explain(analyze=True))
            print(
                search_findings(Finding.objects.order_by("-id"), "Fabrikam")[:100].explain(
                    analyze=True
                )
            )
        name_plan = search_runs(ReviewRun.objects.all(), "Fabrikam").explain()
        writes = {}
        if connection.vendor == "postgresql" and args.write_cost:
            # What the trigram index costs a big run's write: the same rows with it and
            # without it (into runs of their own, so both write into a table as big).
            writes["with the title index"] = write(runs[3], args.write_cost)
            with connection.cursor() as cursor:
                cursor.execute('DROP INDEX "finding_title_trgm"')
            writes["without it"] = write(runs[4], args.write_cost)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)

    print(f"{connection.vendor}: one run with {args.findings:,} findings ")
    print(f"(bulk insert {insert_seconds:.1f} s); median of {REPEATS}\n")
    print("| search | ms | rows |\n|---|---:|---:|")
    for label, ms, found in rows:
        print(f"| {label} | {ms:.1f} | {found} |")
    uses_index = "finding_record_ids_gin" in plan
    print(f"\nrecord id search uses the GIN index: {'yes' if uses_index else 'no'}")
    uses_trgm = "finding_title_trgm" in name_plan
    print(f"name search uses the trigram index: {'yes' if uses_trgm else 'no'}")
    for label, seconds in writes.items():
        print(f"writing {args.write_cost:,} more findings {label}: {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
