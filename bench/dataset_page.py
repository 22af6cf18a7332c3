"""How fast the dataset page renders with a long history: review N consecutive syncs of
one generated CRM (reviews.samplegen.sync, rules only, in-process), dismiss some of its
problems, then time GET /datasets/<name>/ through Django's test client.

    TEST_REDIS_URL=redis://127.0.0.1:6379/1 .venv/bin/python bench/dataset_page.py \\
        [--syncs 20] [--records 10000] [--repeat 20]

It runs on the test settings' Postgres (TEST_DATABASE_URL, default the local one), in a
database of its own that it creates and drops, so it never touches another database.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--syncs", type=int, default=20)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)

    import django

    django.setup()
    from django.conf import settings

    from bench.throwaway_db import throwaway_database

    settings.ALLOWED_HOSTS = ["testserver"]
    with throwaway_database("dataset_page"):
        print(json.dumps(run(args), indent=2))
    return 0


def run(args: argparse.Namespace) -> dict:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from reviews.models import Dataset, Finding
    from reviews.orchestration.dataset.dismissals import dismiss
    from reviews.orchestration.intake.submit import submit
    from reviews.orchestration.run.tasks import start_review
    from reviews.samplegen.sync import generate_syncs
    from tests.uploads import json_upload
    from workspaces.models import Membership, Role, default_workspace

    user = get_user_model().objects.create_user("bench", is_staff=True)
    # A member of the workspace the syncs land in: the page shows only members' datasets.
    Membership.objects.create(user=user, workspace=default_workspace(), role=Role.REVIEWER)
    started = time.perf_counter()
    runs = []
    name = ""
    for batch, _truth in generate_syncs(args.records, args.seed, args.syncs):
        name = batch["dataset"]
        submission = submit([json_upload(batch)], dispatch=False, no_cache=True, created_by=user)
        start_review.apply(kwargs={"run_id": submission.run.pk})
        runs.append(submission.run.pk)
        # Between syncs the team dismisses a few problems of the latest one.
        for finding in Finding.objects.filter(run_id=submission.run.pk, status="new")[:5]:
            dismiss(finding.run.batch.dataset, finding.fingerprint, reason="bench", user=user)
    reviewing = time.perf_counter() - started

    dataset = Dataset.objects.get(name=name)
    client = Client()
    client.force_login(user)
    url = reverse("reviews:dataset", args=[name])
    assert client.get(url).status_code == 200  # warm: templates, connections
    timings = []
    for _ in range(args.repeat):
        with CaptureQueriesContext(connection) as queries:
            began = time.perf_counter()
            response = client.get(url)
            timings.append((time.perf_counter() - began) * 1000)
        assert response.status_code == 200
    timings.sort()
    return {
        "syncs": args.syncs,
        "records_per_sync": args.records,
        "finding_rows": Finding.objects.filter(run__batch__dataset=dataset).count(),
        "dismissals": dataset.dismissals.count(),
        "review_all_syncs_s": round(reviewing, 1),
        "page_ms_median": round(statistics.median(timings), 1),
        "page_ms_p95": round(timings[max(0, int(len(timings) * 0.95) - 1)], 1),
        "page_ms_min": round(timings[0], 1),
        "page_queries": len(queries),
        # Of the last request: where the database time went.
        "query_ms": [round(float(q["time"]) * 1000, 1) for q in queries.captured_queries],
        "page_bytes": len(response.content),
    }


if __name__ == "__main__":
    sys.exit(main())
