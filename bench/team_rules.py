"""What 20 team rules add to the review of a 1M-record batch: the batch is generated,
parsed, made into tables and kept as Parquet (done once per batch by the ingest, timed
but not counted), then what a run adds is timed: the Parquet read, the sandbox lock and
the 20 rules' queries, and the findings made of their matches.

    .venv/bin/python bench/team_rules.py [--records 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "revreview.settings")

# Twenty rules of the shapes teams write, over the generated batch's documented fields
# and its other properties (industry, numberOfEmployees, country, jobTitle).
RULES = [
    ("companies", "domain IS NULL"),
    ("companies", "owner IS NULL AND country = 'DE' AND industry = 'CONSTRUCTION'"),
    ("companies", 'try_cast("numberOfEmployees" AS INTEGER) > 5000 AND domain IS NULL'),
    ("companies", "industry = 'CONSTRUCTION' AND date_diff('day', enriched_at, as_of) > 365"),
    ("companies", "NOT regexp_full_match(lower(domain), '[a-z0-9.-]+\\.[a-z]{2,}')"),
    ("companies", "length(name) < 3 OR upper(name) = name"),
    ("companies", "country IS NOT NULL AND length(country) <> 2"),
    ("contacts", "email IS NULL"),
    ("contacts", "company_id IS NULL AND email IS NOT NULL"),
    ("contacts", "\"jobTitle\" = 'CEO' AND company_id IS NULL"),
    ("contacts", "ends_with(email, '.invalid') OR contains(email, ' ')"),
    ("contacts", "coalesce(trim(first_name), '') = '' OR coalesce(trim(last_name), '') = ''"),
    ("deals", "amount > 100000 AND owner IS NULL AND stage_id = 'contractsent'"),
    ("deals", "stage_id = 'contractsent' AND coalesce(len(contact_ids), 0) = 0"),
    ("deals", "date_diff('day', as_of, close_date) BETWEEN 0 AND 7 AND amount IS NULL"),
    ("deals", "currency IS NOT NULL AND currency NOT IN ('USD', 'EUR', 'GBP')"),
    ("deals", "is_won AND (amount IS NULL OR amount = 0)"),
    ("deals", "close_date < as_of - INTERVAL 90 DAY AND is_closed IS NOT TRUE"),
    ("deals", "pipeline <> 'default' AND stage IS NULL"),
    ("deals", "starts_with(name, 'Test') OR name ILIKE '%copy%'"),
]


def rule_file() -> str:
    items = []
    for number, (name, when) in enumerate(RULES, 1):
        items.append(
            {
                "id": f"bench_rule_{number:02}",
                "object": name,
                "when": when,
                "severity": "warning",
                "title": f"bench rule {number}",
                "fix": "fix it",
            }
        )
    return json.dumps({"rules": items})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    import django

    django.setup()
    from datetime import UTC, datetime

    from reviews.engine.gcpause import no_cyclic_gc
    from reviews.engine.ingest import Limits, UploadedFile, parse_upload
    from reviews.engine.tables.build import build_tables
    from reviews.engine.tables.store import read_parquet, write_parquet
    from reviews.engine.team_rules import run as team_run
    from reviews.engine.team_rules.rulefile import load
    from reviews.samplegen import generate

    rules = load(rule_file())
    batch, _ = generate(args.records, args.seed)
    data = json.dumps(batch).encode()
    del batch
    now = datetime.now(UTC)
    began = time.perf_counter()
    parsed = parse_upload(
        [UploadedFile("b.json", data)],
        as_of=None,
        received_at=now,
        limits=Limits(max_bytes=len(data) + 1, max_errors=100),
    )
    del data
    parse_s = time.perf_counter() - began
    began = time.perf_counter()
    tables = build_tables(parsed)
    build_s = time.perf_counter() - began
    as_of = parsed.as_of.date()
    del parsed
    folder = Path(tempfile.mkdtemp(prefix="bench-team-rules-")) / "tables"
    began = time.perf_counter()
    write_parquet(tables, folder)
    write_s = time.perf_counter() - began
    del tables

    runs = []
    for _ in range(args.repeat):
        began = time.perf_counter()
        kept = read_parquet(folder)
        read_s = time.perf_counter() - began
        began = time.perf_counter()
        outcomes = team_run.run_rules(
            kept, rules, as_of, seconds=team_run.SECONDS, memory_mb=team_run.MEMORY_MB
        )
        rules_s = time.perf_counter() - began
        began = time.perf_counter()
        with no_cyclic_gc():
            findings = [f for o in outcomes for f in team_run.findings_of(o, kept.currency)]
        findings_s = time.perf_counter() - began
        bad = [o.as_dict() for o in outcomes if o.status != team_run.RAN]
        if bad:
            print(json.dumps({"could_not_run": bad}, indent=2))
            return 1
        runs.append((read_s, rules_s, findings_s, len(findings)))
    shutil.rmtree(folder.parent, ignore_errors=True)
    print(
        json.dumps(
            {
                "records": args.records,
                "rules": len(rules),
                "once_per_batch_s": {
                    "parse": round(parse_s, 2),
                    "build_tables": round(build_s, 2),
                    "write_parquet": round(write_s, 2),
                },
                "per_run_s_median": {
                    "read_parquet": round(statistics.median(r[0] for r in runs), 3),
                    "lock_and_20_rules": round(statistics.median(r[1] for r in runs), 3),
                    "findings": round(statistics.median(r[2] for r in runs), 3),
                    "total": round(statistics.median(sum(r[:3]) for r in runs), 3),
                },
                "findings": runs[0][3],
                "per_rule_matches": {o.rule.id: len(o.matches) for o in outcomes},
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
