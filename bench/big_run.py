"""How a big run reads: after `manage.py review FILE` has reviewed a findings-heavy batch,
time what a user does next, in the mode the environment configures.

    .venv/bin/python bench/big_run.py [--repeat 5]

- re-serve: the same content asked for again (its risk tier, decide_serve and the
  cached run's rows, which reference the reviewed run's findings), then the run's JSON
  document built;
- the run page (grouped by kind), one kind opened at page 50, the admin's findings
  changelist: server time through Django's test client, and the number of queries.

Each number is the median of --repeat tries, in milliseconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "revreview.settings")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)

    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from reviews.models import Batch, ReviewRun, findings_of
    from reviews.orchestration.intake.serve import serve
    from reviews.orchestration.store.parsed import parse_stored
    from reviews.reports.report import stream_report_json

    settings.ALLOWED_HOSTS = ["*"]
    settings.SECURE_SSL_REDIRECT = False  # the test client speaks plain HTTP
    source = (
        ReviewRun.objects.filter(mode=ReviewRun.Mode.FRESH, status=ReviewRun.Status.DONE)
        .order_by("-pk")
        .first()
    )
    if source is None:
        print("no finished fresh run: review the file first")
        return 1
    total = findings_of(source).count()
    print(f"run {source.pk}: {total:,} findings; median of {args.repeat} tries\n")
    rows: list[tuple[str, float, str]] = []

    def timed(name: str, work: Callable[[], object], note: str = "") -> None:
        tries = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            work()
            tries.append((time.perf_counter() - started) * 1000)
        rows.append((name, statistics.median(tries), note))

    # The reviewed batch (its content key known) and its parse: what a re-upload of the
    # same content has in hand once it is stored and parsed.
    batch = Batch.objects.get(pk=source.batch_id)
    parsed = parse_stored(batch)

    def reserve() -> None:
        run = serve(batch, parsed)
        assert run.mode == ReviewRun.Mode.CACHED and run.reused_run_id == source.pk

    timed("re-serve: decide_serve + cached run rows", reserve)
    cached = ReviewRun.objects.filter(reused_run=source).order_by("-pk").first()
    timed("cached run: the CLI's JSON document", lambda: b"".join(stream_report_json(cached)))

    user, _ = get_user_model().objects.get_or_create(
        username="bench", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client()
    client.force_login(user)

    def page(url: str, params: dict | None = None) -> Callable[[], None]:
        def get() -> None:
            response = client.get(url, params or {})
            assert response.status_code == 200, response.status_code
            if response.streaming:
                b"".join(response.streaming_content)

        return get

    def first_bytes() -> None:
        response = client.get(f"/runs/{cached.pk}.json")
        assert next(iter(response.streaming_content)).startswith(b'{"batch"')
        response.close()

    timed("cached run: request -> first bytes of its JSON", first_bytes)

    for name, url, params in (
        ("run page (kinds grouped)", f"/runs/{cached.pk}/", None),
        (
            "run page, stale_enrichment page 50",
            f"/runs/{cached.pk}/",
            {"kind": "stale_enrichment", "page": 50},
        ),
        ("admin findings changelist", "/admin/reviews/finding/", None),
        ("admin findings changelist, page 50", "/admin/reviews/finding/", {"p": 50}),
        ("cached run: its JSON over HTTP, whole", f"/runs/{cached.pk}.json", None),
    ):
        with CaptureQueriesContext(connection) as queries:
            page(url, params)()
        timed(name, page(url, params), f"{len(queries)} queries")

    print("| step | ms | note |\n|---|---:|---|")
    for name, ms, note in rows:
        print(f"| {name} | {ms:,.0f} | {note} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
