"""Pulling a HubSpot portal: a full pull of a generated portal from the loopback stand-in
(tests/connectors/standin.py) at HubSpot's own rate limit (190 requests per 10 s), then
an incremental pull of a few thousand changes; each stored and reviewed (rules only,
in-process) as the dataset's syncs, each step timed.

    TEST_REDIS_URL=redis://127.0.0.1:6379/1 .venv/bin/python bench/hubspot_pull.py \\
        [--records 100000] [--changes 2000] [--share 0.5]

It runs on the test settings' Postgres, in a database of its own that it creates and
drops. The pull uses the shipped settings (HUBSPOT_RATE_SHARE, default half the limit)
unless --share says otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--changes", type=int, default=2_000)
    parser.add_argument("--share", type=float, default=None)
    parser.add_argument("--interval-ms", type=int, default=10_000)
    parser.add_argument("--max", type=int, default=190)
    args = parser.parse_args(argv)

    import django

    django.setup()
    from bench.throwaway_db import throwaway_database

    with throwaway_database("hubspot_pull"):
        print(json.dumps(run(args), indent=2))
    return 0


def portal_of(records: int):
    """companies 20%, contacts 50%, deals 30%; every contact and deal with a primary
    company, every deal with a contact; stamped a day ago."""
    from tests.connectors.standin import Portal

    portal = Portal()
    portal.clock_ms = int(time.time() * 1000) - 86_400_000
    n_companies, n_contacts = records // 5, records // 2
    n_deals = records - n_companies - n_contacts
    for i in range(1, n_companies + 1):
        portal.put("companies", str(i), {"name": f"Company {i}", "domain": f"c{i}.example"})
    for i in range(1, n_contacts + 1):
        cid = str(1 + i % n_companies)
        portal.put("contacts", str(i), {"email": f"p{i}@c{cid}.example", "firstname": f"P{i}"})
        portal.link("contacts", str(i), "companies", cid, primary=True)
    for i in range(1, n_deals + 1):
        cid = str(1 + i % n_companies)
        portal.put(
            "deals",
            str(i),
            {
                "dealname": f"Deal {i}",
                "amount": str(1000 + i % 50_000),
                "pipeline": "default",
                "dealstage": "qualifiedtobuy",
                "closedate": "2027-06-30T00:00:00Z",
                "hubspot_owner_id": str(900 + i % 7),
            },
        )
        portal.link("deals", str(i), "companies", cid, primary=True)
        portal.link("deals", str(i), "contacts", str(1 + i % n_contacts))
    return portal


def run(args: argparse.Namespace) -> dict:
    from django.conf import settings

    from connectors import pulls
    from reviews.models import Dataset
    from reviews.orchestration.run.tasks import start_review
    from tests.connectors.standin import StandIn

    began = time.perf_counter()
    portal = portal_of(args.records)
    portal.max_per_interval, portal.interval_ms = args.max, args.interval_ms
    out: dict = {
        "records": args.records,
        "limit": f"{args.max} requests per {args.interval_ms} ms",
        "portal_built_s": round(time.perf_counter() - began, 1),
    }
    if args.share is not None:
        settings.HUBSPOT_RATE_SHARE = args.share
    out["share"] = settings.HUBSPOT_RATE_SHARE
    with StandIn(portal) as api:
        settings.HUBSPOT_API_BASE_URL = api.url
        dataset = Dataset.objects.create(name="bench-portal")
        connection = pulls.connect(dataset, "pat-na1-good")

        def timed_pull(full: bool) -> dict:
            pull = pulls.request_pull(connection, full=full, by="bench")
            t0 = time.perf_counter()
            pull, submission = pulls.execute_pull(pull.pk, dispatch=False)
            pulled = time.perf_counter() - t0
            assert pull.status == "done", pull.error
            t1 = time.perf_counter()
            start_review.apply(kwargs={"run_id": submission.run.pk})
            reviewed = time.perf_counter() - t1
            submission.run.refresh_from_db()
            return {
                "kind": pull.kind,
                "requests": pull.requests,
                "records": pull.records,
                "fetched": pull.changed,
                "fetch_s": round(pull.fetch_seconds, 1),
                "waiting_share_of_fetch": round(pull.waited_seconds / pull.fetch_seconds, 3),
                "in_flight_s": round(pull.in_flight_seconds, 1),
                "revreview_share_of_fetch": round(
                    1 - (pull.waited_seconds + pull.in_flight_seconds) / pull.fetch_seconds, 3
                ),
                "rate_limit_floor_s": round(
                    pull.requests
                    / int(settings.HUBSPOT_RATE_SHARE * args.max)
                    * args.interval_ms
                    / 1000,
                    1,
                ),
                "pull_store_parse_s": round(pulled, 1),
                "waited_on_limits_s": round(pull.waited_seconds, 1),
                "waiting_share_of_pull": round(pull.waited_seconds / pulled, 3),
                "review_s": round(reviewed, 1),
                "pull_and_review_s": round(pulled + reviewed, 1),
                "waiting_share_with_review": round(pull.waited_seconds / (pulled + reviewed), 3),
                "run_status": submission.run.status,
                "429s": [s for *_, s in portal.log].count(429),
            }

        out["full"] = timed_pull(True)
        connection.refresh_from_db()
        portal.clock_ms = int(time.time() * 1000)
        for n in range(args.changes):  # spread over the three types
            kind = ("companies", "contacts", "deals")[n % 3]
            rid = str(1 + (n * 7919) % (len(portal.objects[kind]) - 1))
            prop = {"companies": "name", "contacts": "firstname", "deals": "dealname"}[kind]
            portal.put(kind, rid, {prop: f"Changed {n}"})
        portal.log.clear()
        out["incremental"] = timed_pull(False)
    out["total_s"] = round(time.perf_counter() - began, 1)
    return out


if __name__ == "__main__":
    sys.exit(main())
