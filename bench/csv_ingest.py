"""How fast HubSpot CSV deals exports are read: the same deals written as HubSpot
exports them (plain numbers, ISO dates) and as Excel saves them in a US locale
("$410,000.00", "07/31/2026"), parsed into a Batch in this process.

    .venv/bin/python bench/csv_ingest.py [--records 100000] [--repeat 3]

Prints the best of --repeat runs per style, and the number of values that became
invalid_value (0 for both: every value is well formed)."""

from __future__ import annotations

import argparse
import csv
import io
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reviews.engine.ingest import UploadedFile, parse_upload  # noqa: E402

HEADERS = [
    "Record ID", "Deal Name", "Deal Stage", "Amount", "Close Date",
    "Associated Company IDs (Primary)", "Associated Company IDs", "Associated Contact IDs",
    "Last Modified Date",
]  # fmt: skip


def deals_csv(records: int, style: str, seed: int = 7) -> bytes:
    rng = random.Random(seed)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(HEADERS)
    for i in range(records):
        amount = rng.randint(1000, 900000)
        month, day = rng.randint(1, 12), rng.randint(1, 28)
        if style == "excel":
            cells = (f"${amount:,.2f}", f"{month:02d}/{day:02d}/2026")
        else:
            cells = (str(amount), f"2026-{month:02d}-{day:02d}")
        company = i % 1000
        writer.writerow([
            i, f"Deal {i}", "Closed Won", *cells, company, f"{company};{i % 777}",
            f"{i};{i + 1}", "2026-07-30 10:11",
        ])  # fmt: skip
    return out.getvalue().encode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for style in ("hubspot", "excel"):
        data = deals_csv(args.records, style)
        best = float("inf")
        for _ in range(args.repeat):
            started = time.perf_counter()
            batch = parse_upload(
                [UploadedFile("deals.csv", data)], as_of=None, received_at=datetime.now(UTC)
            )
            best = min(best, time.perf_counter() - started)
        print(
            f"{style:8} {len(batch.deals):,} deals, {len(data) / 1e6:.1f} MB: {best:.2f} s "
            f"({len(batch.deals) / best:,.0f} rec/s), {len(batch.value_problems)} invalid values"
        )


if __name__ == "__main__":
    main()
